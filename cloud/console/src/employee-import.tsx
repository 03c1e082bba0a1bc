import { useId, useState } from 'react'
import type { ImportReport } from './api-types.js'
import { useConsole } from './console-context.js'
import { type Column, DataTable } from './data-table.js'
import { ErrorNotice } from './error-notice.js'
import { Notice } from './notice.js'
import { StatusBadge } from './status-badge.js'
import { SubmitButton } from './submit-button.js'
import { useSubmit } from './use-submit.js'

const OUTCOME_TEXT = {
  created: 'Added',
  updated: 'Updated',
  unchanged: 'No change',
  failed: 'Not imported',
} as const
const MAX_BYTES = 1024 * 1024
const REPORT_COLUMNS: Column<ImportReport['lines'][number]>[] = [
  { heading: 'Line', cell: (l) => l.line },
  { heading: 'Code', cell: (l) => <code>{l.employeeCode ?? ''}</code> },
  { heading: 'Result', cell: (l) => <StatusBadge status={l.outcome} label={OUTCOME_TEXT[l.outcome]} /> },
  { heading: 'Problem', cell: (l) => l.errors?.join('; ') ?? '' },
]

/** Imports a CSV of employees (POST /employees/import) and reports on each line. */
export function EmployeeImport({ onImported }: { onImported: () => void }) {
  const { api } = useConsole()
  const inputId = useId()
  const hintId = `${inputId}-hint`
  const [file, setFile] = useState<File>()
  const [report, setReport] = useState<ImportReport>()
  const [problemsOnly, setProblemsOnly] = useState(false)
  const { busy, error, submit } = useSubmit(
    async () => {
      if (!file) return
      const result = await api.postText<ImportReport>('/employees/import', await file.text(), 'text/csv')
      setReport(result)
      setProblemsOnly(result.summary.failed > 0)
      onImported()
    },
    () => {
      setReport(undefined)
      if (!file) return 'Choose a CSV file first.'
      if (file.size > MAX_BYTES)
        return 'The file is larger than 1 MB. Split it into smaller files and import each.'
      return undefined
    },
  )

  const lines = report ? report.lines.filter((l) => !problemsOnly || l.outcome === 'failed') : []

  return (
    <section className="card">
      <h2>Import employees from a CSV file</h2>
      <p id={hintId}>
        The first line names the columns: <code>employeeCode,name,email,department,location,status</code>.
        Only <code>employeeCode</code> and <code>name</code> are required; status is ACTIVE, INACTIVE or
        TERMINATED (ACTIVE if empty). An employee whose code exists is updated; the others are added. Lines
        with a problem are reported and skipped; the rest are imported.
      </p>
      <form className="filters" onSubmit={submit}>
        <div className="field">
          <label htmlFor={inputId}>CSV file</label>
          <input
            id={inputId}
            type="file"
            accept=".csv,text/csv"
            aria-describedby={hintId}
            onChange={(e) => setFile(e.target.files?.[0])}
          />
        </div>
        <SubmitButton busy={busy} label="Import" busyLabel="Importing…" />
      </form>
      <ErrorNotice error={error} />
      {report ? (
        <>
          <Notice kind={report.summary.failed > 0 ? 'error' : 'success'}>
            Import finished: {report.summary.created} added, {report.summary.updated} updated,{' '}
            {report.summary.unchanged} unchanged, {report.summary.failed} not imported.
            {report.summary.failed > 0 ? ' Fix the lines below in your file and import it again.' : ''}
          </Notice>
          <label className="choice">
            <input
              type="checkbox"
              checked={problemsOnly}
              onChange={(e) => setProblemsOnly(e.target.checked)}
            />{' '}
            Show only lines that were not imported
          </label>
          <DataTable
            caption="Import report, line by line"
            showCaption
            columns={REPORT_COLUMNS}
            rows={lines}
            rowKey={(l) => l.line}
          />
        </>
      ) : null}
    </section>
  )
}
