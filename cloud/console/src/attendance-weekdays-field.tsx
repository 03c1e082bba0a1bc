import { WEEKDAYS } from './attendance-policy-fields.js'

interface AttendanceWeekdaysFieldProps {
  /** null: inherited. */
  days: number[] | null
  onChange: (days: number[] | null) => void
  /** What is in effect now, for the hint. */
  inEffect?: string | undefined
}

/** The weekly off days a policy sets, or that it inherits them. */
export function AttendanceWeekdaysField({ days, onChange, inEffect }: AttendanceWeekdaysFieldProps) {
  return (
    <fieldset className="field">
      <legend>Weekly off days</legend>
      <p className="hint">
        Days with no work expected: a day worked on one is flagged.
        {inEffect ? ` In effect now: ${inEffect}.` : ''}
      </p>
      <label className="choice">
        <input
          type="checkbox"
          checked={days === null}
          onChange={(e) => onChange(e.target.checked ? null : [])}
        />{' '}
        Inherit
      </label>
      <div className="attendance-weekdays">
        {WEEKDAYS.map((name, day) => (
          <label key={name} className="choice">
            <input
              type="checkbox"
              disabled={days === null}
              checked={days?.includes(day) ?? false}
              onChange={(e) =>
                onChange(e.target.checked ? [...(days ?? []), day] : (days ?? []).filter((d) => d !== day))
              }
            />{' '}
            {name}
          </label>
        ))}
      </div>
    </fieldset>
  )
}
