import { type FormEvent, useId, useState } from 'react'
import { errorMessage } from './api-client.js'
import type { ImportReport } from './api-types.js'
import { useConsole } from './console-context.js'
import { Notice } from './notice.js'
import { StatusBadge } from './status-badge.js'

const OUTCOME_TEXT = {
  created: 'Added',
  updated: 'Updated',
  unchanged: 'No change',
  failed: 'Not imported',
} as const
const MAX_BYTES = 1024 * 1024

/** Imports a CSV of employees (POST /employees/import) and reports on each line. */
export function EmployeeImport({ onImported }: { onImported: () => void }) {
  const { api } = useConsole()
  const inputId = useId()
  const hintId = `${inputId}-hint`
  const [file, setFile] = useState<File>()
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string>()
  const [report, setReport] = useState<ImportReport>()
  const [problemsOnly, setProblemsOnly] = useState(false)

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setError(undefined)
    setReport(undefined)
    if (!file) {
      setError('Choose a CSV file first.')
      return
    }
    if (file.size > MAX_BYTES) {
      setError('The file is larger than 1 MB. Split it into smaller files and import each.')
      return
    }
    setBusy(true)
    try {
      const result = await api.postText<ImportReport>('/employees/import', await file.text(), 'text/csv')
      setReport(result)
      setProblemsOnly(result.summary.failed > 0)
      onImported()
    } catch (err) {
      setError(errorMessage(err))
    } finally {
      setBusy(false)
    }
  }

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
        <button type="submit" className="button-primary" disabled={busy}>
          {busy ? 'Importing…' : 'Import'}
        </button>
      </form>
      {error ? <Notice kind="error">{error}</Notice> : null}
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
          <div className="table-wrap">
            <table>
              <caption>Import report, line by line</caption>
              <thead>
                <tr>
                  <th scope="col">Line</th>
                  <th scope="col">Code</th>
                  <th scope="col">Result</th>
                  <th scope="col">Problem</th>
                </tr>
              </thead>
              <tbody>
                {lines.map((l) => (
                  <tr key={l.line}>
                    <td>{l.line}</td>
                    <td>
                      <code>{l.employeeCode ?? ''}</code>
                    </td>
                    <td>
                      <StatusBadge status={l.outcome} label={OUTCOME_TEXT[l.outcome]} />
                    </td>
                    <td>{l.errors?.join('; ') ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
    </section>
  )
}
