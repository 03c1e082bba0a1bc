import type { AttendanceDay } from './api-types.js'
import type { MonthGrid } from './attendance-month.js'
import { dayLabel, STATUS_MARK } from './attendance-text.js'
import { dateMillis, formatMinutes, formatWorkDate } from './attendance-time.js'

const weekday = new Intl.DateTimeFormat(undefined, { weekday: 'narrow', timeZone: 'UTC' })

interface AttendanceMonthGridProps {
  grid: MonthGrid
  /** "Attendance, November 2026": names the table for screen readers. */
  caption: string
  /** A cell was chosen: show that day. */
  onOpen: (day: AttendanceDay) => void
}

/**
 * The month at a glance: a row per employee, a column per date, a mark per day (its status; how final it is
 * in its outline), then the month's totals. Each mark is a button that opens the day.
 */
export function AttendanceMonthGrid({ grid, caption, onOpen }: AttendanceMonthGridProps) {
  return (
    <div className="table-wrap">
      <table className="attendance-grid">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Employee</th>
            {grid.dates.map((date) => (
              <th key={date} scope="col" className="attendance-date" abbr={formatWorkDate(date)}>
                {Number(date.slice(8))}
                <span className="attendance-weekday" aria-hidden="true">
                  {weekday.format(dateMillis(date))}
                </span>
              </th>
            ))}
            <th scope="col">
              <abbr title="Present, half days, absent, incomplete">P / H / A / !</abbr>
            </th>
            <th scope="col">Worked</th>
            <th scope="col">Overtime</th>
          </tr>
        </thead>
        <tbody>
          {grid.rows.map((row) => (
            <tr key={row.employeeCode}>
              <th scope="row">
                <code>{row.employeeCode}</code>
              </th>
              {row.cells.map((day, i) => (
                <td key={grid.dates[i]} className="attendance-cell-wrap">
                  {day ? (
                    <DayMark day={day} onOpen={onOpen} />
                  ) : (
                    <span className="attendance-cell attendance-none">
                      <span aria-hidden="true">·</span>
                      <span className="visually-hidden">No record</span>
                    </span>
                  )}
                </td>
              ))}
              <td className="attendance-number">
                {row.totals.present} / {row.totals.halfDay} / {row.totals.absent} / {row.totals.incomplete}
              </td>
              <td className="attendance-number">{formatMinutes(row.totals.workedMinutes)}</td>
              <td className="attendance-number">{formatMinutes(row.totals.overtimeMinutes)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

function DayMark({ day, onOpen }: { day: AttendanceDay; onOpen: (day: AttendanceDay) => void }) {
  const label = `${day.employeeCode}, ${formatWorkDate(day.workDate)}: ${dayLabel(day)}`
  const flagged = day.flags.length > 0
  return (
    <button
      type="button"
      className={`attendance-cell attendance-status-${day.status.toLowerCase()} attendance-state-${day.state.toLowerCase()}`}
      aria-label={label}
      title={label}
      onClick={() => onOpen(day)}
    >
      {STATUS_MARK[day.status]}
      {flagged ? <span className="attendance-flagged" aria-hidden="true" /> : null}
    </button>
  )
}
