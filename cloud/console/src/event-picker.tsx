import { useId } from 'react'
import type { EventType } from './api-types.js'

interface EventPickerProps {
  catalog: EventType[]
  /** Empty: every event, including those added later. */
  selected: string[]
  onChange: (selected: string[]) => void
}

/** Which events an endpoint receives, from the catalog (GET /api/public/v1/webhook-event-types). */
export function EventPicker({ catalog, selected, onChange }: EventPickerProps) {
  const name = useId()
  const all = selected.length === 0
  const toggle = (type: string, on: boolean) =>
    onChange(on ? [...selected, type] : selected.filter((t) => t !== type))
  return (
    <fieldset className="field">
      <legend>Events</legend>
      <label className="choice">
        <input type="radio" name={name} checked={all} onChange={() => onChange([])} /> Every event, including
        ones Hajri adds later
      </label>
      <label className="choice">
        <input
          type="radio"
          name={name}
          checked={!all}
          onChange={() => onChange(catalog[0] ? [catalog[0].type] : [])}
        />{' '}
        Only the events I choose
      </label>
      {all ? null : (
        <ul className="event-list">
          {catalog.map((event) => (
            <li key={event.type}>
              <label className="choice">
                <input
                  type="checkbox"
                  checked={selected.includes(event.type)}
                  onChange={(e) => toggle(event.type, e.target.checked)}
                />{' '}
                <code>{event.type}</code> <span className="muted">{event.description}</span>
              </label>
            </li>
          ))}
        </ul>
      )}
    </fieldset>
  )
}
