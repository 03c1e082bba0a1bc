import { type FormEvent, useState } from 'react'
import { errorMessage } from './api-client.js'
import type { EventType } from './api-types.js'
import { EventPicker } from './event-picker.js'
import { Field } from './field.js'
import { Notice } from './notice.js'

export interface EndpointFields {
  url: string
  description: string
  events: string[]
}

interface EndpointFormProps {
  initial: EndpointFields
  catalog: EventType[]
  submitLabel: string
  onSubmit: (fields: EndpointFields) => Promise<void>
  onCancel: () => void
}

/** URL, description and events of a webhook endpoint: for adding one and for changing one. */
export function EndpointForm({ initial, catalog, submitLabel, onSubmit, onCancel }: EndpointFormProps) {
  const [fields, setFields] = useState(initial)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string>()

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      await onSubmit({ ...fields, url: fields.url.trim(), description: fields.description.trim() })
    } catch (err) {
      setError(errorMessage(err))
      setBusy(false)
    }
  }

  return (
    <form onSubmit={submit}>
      {error ? <Notice kind="error">{error}</Notice> : null}
      <Field label="URL" hint="Where Hajri sends events: an https:// address on your server.">
        <input
          type="url"
          required
          maxLength={2048}
          placeholder="https://hr.example.com/hajri-events"
          value={fields.url}
          onChange={(e) => setFields({ ...fields, url: e.target.value })}
          data-initial-focus
        />
      </Field>
      <Field label="Description (optional)" hint="What receives these events, for whoever looks here next.">
        <input
          maxLength={500}
          value={fields.description}
          onChange={(e) => setFields({ ...fields, description: e.target.value })}
        />
      </Field>
      <EventPicker
        catalog={catalog}
        selected={fields.events}
        onChange={(events) => setFields({ ...fields, events })}
      />
      <div className="dialog-actions">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="button-primary" disabled={busy}>
          {busy ? 'Saving…' : submitLabel}
        </button>
      </div>
    </form>
  )
}
