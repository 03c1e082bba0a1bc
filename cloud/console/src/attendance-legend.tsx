import type { DayState, DayStatusName } from './api-types.js'
import { STATE_HINT, STATUS_HINT, STATUS_MARK, STATUS_TEXT } from './attendance-text.js'

const STATUSES = Object.keys(STATUS_TEXT) as DayStatusName[]
const STATES: { state: DayState; name: string; hint: string }[] = [
  {
    state: 'PROVISIONAL',
    name: 'Dashed outline: not final yet',
    hint: `open (${STATE_HINT.OPEN}) or provisional (${STATE_HINT.PROVISIONAL})`,
  },
  { state: 'FINAL', name: 'Filled: final', hint: STATE_HINT.FINAL },
  { state: 'LOCKED', name: 'Filled and underlined: locked', hint: STATE_HINT.LOCKED },
]

/** What the month grid's marks mean: the status in each letter, how final a day is in its outline. */
export function AttendanceLegend() {
  return (
    <section className="attendance-legend" aria-labelledby="attendance-legend-title">
      <h2 id="attendance-legend-title">Legend</h2>
      <ul className="attendance-legend-list">
        {STATUSES.map((status) => (
          <li key={status}>
            <Mark status={status} state="FINAL" /> <strong>{STATUS_TEXT[status]}</strong>:{' '}
            {STATUS_HINT[status]}
          </li>
        ))}
      </ul>
      <ul className="attendance-legend-list">
        {STATES.map(({ state, name, hint }) => (
          <li key={state}>
            <Mark status="PRESENT" state={state} /> <strong>{name}</strong>: {hint}
          </li>
        ))}
        <li>
          <Mark status="PRESENT" state="FINAL" flagged /> <strong>Corner dot</strong>: the day has flags (late
          entry, early exit, a missing punch…); open it to see them
        </li>
      </ul>
    </section>
  )
}

function Mark({ status, state, flagged }: { status: DayStatusName; state: DayState; flagged?: boolean }) {
  return (
    <span
      className={`attendance-cell attendance-status-${status.toLowerCase()} attendance-state-${state.toLowerCase()}`}
      aria-hidden="true"
    >
      {STATUS_MARK[status]}
      {flagged ? <span className="attendance-flagged" /> : null}
    </span>
  )
}
