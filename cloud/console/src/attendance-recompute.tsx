import { useState } from 'react'
import type { RecomputeJob } from './api-types.js'
import { employeeCodes } from './attendance-form.js'
import { type Month, monthRange } from './attendance-month.js'
import { jobFinished, useRecomputeJob } from './attendance-recompute-job.js'
import { AttendanceSection } from './attendance-section.js'
import { todayIn } from './attendance-time.js'
import { useConsole } from './console-context.js'
import { ErrorNotice } from './error-notice.js'
import { Notice } from './notice.js'
import { StatusBadge } from './status-badge.js'
import { SubmitButton } from './submit-button.js'
import { TextField } from './text-field.js'
import { TimeText } from './time-text.js'
import { useSubmit } from './use-submit.js'

const JOB_STATUS_TEXT: Record<RecomputeJob['status'], string> = {
  queued: 'Queued',
  running: 'Running',
  done: 'Done',
  failed: 'Failed',
}

/** Computes a period's days again from their punches and today's settings, and follows the job. */
export function AttendanceRecompute({ month }: { month: Month }) {
  const { canWrite, tenant } = useConsole()
  const range = monthRange(month)
  // Up to today at most: a recompute makes every day of its range, and days to come would be made absent.
  const today = todayIn(tenant.timeZone)
  const [from, setFrom] = useState(range.from)
  const [to, setTo] = useState(range.to < today ? range.to : today)
  const [codes, setCodes] = useState('')
  const { job, error, start, check } = useRecomputeJob()
  const submission = useSubmit(
    async () => {
      const employees = employeeCodes(codes)
      await start({ from, to, ...(employees.length > 0 ? { employeeCodes: employees } : {}) })
    },
    () => (to < from ? 'The last date is before the first.' : undefined),
  )
  const running = job !== undefined && !jobFinished(job)

  return (
    <AttendanceSection
      title="Recompute"
      lead="Settings apply to days computed after they change. Recompute a period to apply them to its days too: each day is computed again from its punches and corrections. Locked days are not changed."
    >
      {canWrite ? (
        <form className="filters" aria-label="Recompute a period" onSubmit={submission.submit}>
          <TextField label="From" type="date" required value={from} onChange={setFrom} />
          <TextField
            label="Until"
            hint="Not after today: days to come are made as they come."
            type="date"
            required
            max={today}
            value={to}
            onChange={setTo}
          />
          <TextField
            label="Employee codes (optional)"
            hint="Separated by commas or spaces. Empty: everyone."
            value={codes}
            onChange={setCodes}
          />
          <SubmitButton busy={submission.busy || running} label="Recompute" busyLabel="Recomputing…" />
        </form>
      ) : (
        <p className="muted">An owner or admin can recompute a period.</p>
      )}
      <ErrorNotice error={submission.error} />
      {job ? <JobProgress job={job} /> : null}
      {error ? (
        <Notice kind="error">
          {error}{' '}
          <button type="button" className="button-link" onClick={check}>
            Check again
          </button>
        </Notice>
      ) : null}
    </AttendanceSection>
  )
}

function JobProgress({ job }: { job: RecomputeJob }) {
  return (
    <div className="card attendance-job" aria-live="polite">
      <p>
        <StatusBadge status={`job-${job.status}`} label={JOB_STATUS_TEXT[job.status]} /> Recompute of{' '}
        {job.from} to {job.to}: {job.employeesDone} of {job.employees} employees,{' '}
        {job.daysChanged === 1 ? '1 day' : `${job.daysChanged} days`} changed.
      </p>
      <progress
        max={Math.max(job.employees, 1)}
        value={job.employeesDone}
        aria-label="Employees recomputed"
      />
      {job.error ? <p className="warning-text">{job.error}</p> : null}
      <p className="muted">
        Started <TimeText value={job.createdAt} />
        {job.finishedAt ? (
          <>
            , finished <TimeText value={job.finishedAt} />
          </>
        ) : null}
        . Job <code>{job.id}</code>
      </p>
    </div>
  )
}
