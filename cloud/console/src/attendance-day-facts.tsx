import type { AttendanceDay } from './api-types.js'
import { DAY_TYPE_TEXT, FLAG_TEXT, STATE_HINT, STATE_TEXT, STATUS_TEXT } from './attendance-text.js'
import { formatMinutes, timeInDay } from './attendance-time.js'
import { StatusBadge } from './status-badge.js'
import { TimeText } from './time-text.js'

/** A day's status and figures, as a list of facts (times in the tenant's time zone, durations in h:mm). */
export function AttendanceDayFacts({ day }: { day: AttendanceDay }) {
  const at = (iso: string | null) => timeInDay(iso, day.workDate)
  return (
    <dl className="facts">
      <dt>Status</dt>
      <dd>
        <StatusBadge status={`attendance-${day.status.toLowerCase()}`} label={STATUS_TEXT[day.status]} />{' '}
        {STATE_TEXT[day.state]} <span className="muted">({STATE_HINT[day.state]})</span>
      </dd>
      <dt>Day</dt>
      <dd>
        {DAY_TYPE_TEXT[day.dayType]},{' '}
        {day.shiftCode ? (
          <>
            shift <code>{day.shiftCode}</code>
            {day.scheduledStart && day.scheduledEnd
              ? `, ${at(day.scheduledStart)} to ${at(day.scheduledEnd)}`
              : null}
          </>
        ) : (
          'no shift assigned'
        )}
      </dd>
      <dt>First IN</dt>
      <dd>{at(day.firstIn)}</dd>
      <dt>Last OUT</dt>
      <dd>{at(day.lastOut)}</dd>
      <dt>Worked</dt>
      <dd>{formatMinutes(day.workedMinutes)}</dd>
      <dt>Break</dt>
      <dd>{formatMinutes(day.breakMinutes)}</dd>
      <dt>Late</dt>
      <dd>{formatMinutes(day.lateMinutes)}</dd>
      <dt>Early exit</dt>
      <dd>{formatMinutes(day.earlyExitMinutes)}</dd>
      <dt>Overtime</dt>
      <dd>{formatMinutes(day.overtimeMinutes)}</dd>
      <dt>Spread-over</dt>
      <dd>{formatMinutes(day.spreadOverMinutes)}</dd>
      <dt>Flags</dt>
      <dd>
        {day.flags.length === 0 ? (
          <span className="muted">None</span>
        ) : (
          <ul className="attendance-flags">
            {day.flags.map((f) => (
              <li key={f}>{FLAG_TEXT[f]}</li>
            ))}
          </ul>
        )}
      </dd>
      <dt>Revision</dt>
      <dd>
        {day.revision}, changed <TimeText value={day.updatedAt} />
      </dd>
    </dl>
  )
}
