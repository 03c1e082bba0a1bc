import { useState } from 'react'
import type { EventType } from './api-types.js'
import { EventPicker } from './event-picker.js'
import { FormDialog, type FormDialogTexts } from './form-dialog.js'
import { TextField } from './text-field.js'
import { useSubmit } from './use-submit.js'

export interface EndpointFields {
  url: string
  description: string
  events: string[]
}

interface EndpointDialogProps extends FormDialogTexts {
  initial: EndpointFields
  catalog: EventType[]
  onSubmit: (fields: EndpointFields) => Promise<void>
}

/** URL, description and events of a webhook endpoint: for adding one and for changing one. */
export function EndpointDialog({ initial, catalog, onSubmit, ...dialog }: EndpointDialogProps) {
  const [fields, setFields] = useState(initial)
  const submission = useSubmit(() =>
    onSubmit({ ...fields, url: fields.url.trim(), description: fields.description.trim() }),
  )

  return (
    <FormDialog {...dialog} submission={submission} busyLabel="Saving…" wide>
      <TextField
        label="URL"
        hint="Where Hajri sends events: an https:// address on your server."
        type="url"
        required
        maxLength={2048}
        placeholder="https://hr.example.com/hajri-events"
        value={fields.url}
        onChange={(url) => setFields({ ...fields, url })}
        data-initial-focus
      />
      <TextField
        label="Description (optional)"
        hint="What receives these events, for whoever looks here next."
        maxLength={500}
        value={fields.description}
        onChange={(description) => setFields({ ...fields, description })}
      />
      <EventPicker
        catalog={catalog}
        selected={fields.events}
        onChange={(events) => setFields({ ...fields, events })}
      />
    </FormDialog>
  )
}
