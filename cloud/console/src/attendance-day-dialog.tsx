import { useCallback, useEffect, useState } from 'react'
import { errorMessage } from './api-client.js'
import type { AttendanceDayDetail, DayPunch } from './api-types.js'
import { dayPath } from './attendance-api.js'
import { AttendanceDayFacts } from './attendance-day-facts.js'
import { ROLE_TEXT } from './attendance-text.js'
import { formatMinutes, formatWorkDate, timeInDay } from './attendance-time.js'
import { useConsole } from './console-context.js'
import { type Column, DataTable } from './data-table.js'
import { Dialog } from './dialog.js'
import { LastNotice, type NoticeText } from './last-notice.js'

interface AttendanceDayDialogProps {
  employeeCode: string
  workDate: string
  /** What the last correction said, shown above the day. */
  notice?: NoticeText | undefined
  onClose: () => void
  /** Owners and admins: add a punch the device missed. */
  onAddPunch: (day: AttendanceDayDetail) => void
  /** Owners and admins: void a punch that should not count. */
  onVoid: (day: AttendanceDayDetail, punch: DayPunch) => void
}

const PAIR_COLUMNS = (workDate: string): Column<AttendanceDayDetail['pairs'][number]>[] => [
  { heading: 'In', cell: (p) => timeInDay(p.in, workDate) },
  { heading: 'Out', cell: (p) => timeInDay(p.out, workDate) },
  { heading: 'Worked', className: 'attendance-number', cell: (p) => formatMinutes(p.minutes) },
]

/** One employee's day: its figures, its punches and how each counted, why, and corrections. */
export function AttendanceDayDialog({
  employeeCode,
  workDate,
  notice,
  onClose,
  onAddPunch,
  onVoid,
}: AttendanceDayDialogProps) {
  const { api, canWrite } = useConsole()
  const [day, setDay] = useState<AttendanceDayDetail>()
  const [error, setError] = useState<NoticeText>()

  const load = useCallback(async () => {
    try {
      setDay(await api.get<AttendanceDayDetail>(dayPath(employeeCode, workDate)))
      setError(undefined)
    } catch (err) {
      setError({ kind: 'error', text: errorMessage(err) })
    }
  }, [api, employeeCode, workDate])

  useEffect(() => {
    void load()
  }, [load])

  const correctable = canWrite && day !== undefined && day.state !== 'LOCKED'
  const punchColumns: Column<DayPunch>[] = [
    { heading: 'Time', cell: (p) => timeInDay(p.punchedAt, workDate) },
    { heading: 'Punch', cell: (p) => p.punchType },
    { heading: 'Counted', cell: (p) => ROLE_TEXT[p.role] },
    { heading: 'Punch id', cell: (p) => <code>{p.id}</code> },
  ]

  return (
    <Dialog title={`${employeeCode}, ${formatWorkDate(workDate)}`} onClose={onClose} wide>
      <LastNotice notice={error ?? notice} />
      {day ? (
        <>
          <AttendanceDayFacts day={day} />

          <h3>Punches</h3>
          {day.punches.length === 0 ? (
            <p>No punch on this day.</p>
          ) : (
            <DataTable
              caption="Punches of the day, in time order"
              columns={punchColumns}
              rows={day.punches}
              rowKey={(p) => p.id}
              actions={
                correctable
                  ? (p) => (
                      <button
                        type="button"
                        className="button-danger"
                        onClick={() => onVoid(day, p)}
                        aria-label={`Void the ${p.punchType} punch at ${timeInDay(p.punchedAt, workDate)}`}
                      >
                        Void
                      </button>
                    )
                  : undefined
              }
            />
          )}

          <h3>Worked periods</h3>
          {day.pairs.length === 0 ? (
            <p>No IN and OUT pair.</p>
          ) : (
            <DataTable
              caption="IN and OUT pairs"
              columns={PAIR_COLUMNS(workDate)}
              rows={day.pairs}
              rowKey={(p) => `${p.in}-${p.out}`}
            />
          )}

          <h3>How it was counted</h3>
          {day.explanation.length === 0 ? (
            <p>Nothing to explain.</p>
          ) : (
            <ul className="attendance-explanation">
              {day.explanation.map((e, i) => (
                // The same field may be explained more than once; the order is the server's.
                // biome-ignore lint/suspicious/noArrayIndexKey: sentences have no id and never reorder
                <li key={i}>{e.text}</li>
              ))}
            </ul>
          )}
          {canWrite && day.state === 'LOCKED' ? (
            <p className="muted">
              This day is locked: payroll has closed its period, so corrections are no longer applied to it.
            </p>
          ) : null}
        </>
      ) : error ? null : (
        <p aria-busy="true">Loading…</p>
      )}
      <div className="dialog-actions">
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
        {correctable ? (
          <button type="button" className="button-primary" onClick={() => onAddPunch(day)}>
            Add punch
          </button>
        ) : null}
        <button type="button" onClick={onClose} data-initial-focus>
          Close
        </button>
      </div>
    </Dialog>
  )
}
