import { type FormEvent, useState } from 'react'
import { errorMessage } from './api-client.js'
import type { WebhookEndpoint } from './api-types.js'
import { ConfirmDialog } from './confirm-dialog.js'
import { useConsole } from './console-context.js'
import { localInputToRfc3339, plural, toLocalInput } from './format.js'
import { LastNotice, type NoticeText } from './last-notice.js'
import { SelectField } from './select-field.js'
import { TextField } from './text-field.js'

const DAY_MS = 86_400_000

interface ReplayFormProps {
  endpoints: WebhookEndpoint[]
  onReplayed: () => void
}

/**
 * Sends again every failed or exhausted delivery since a time (POST /webhooks/{id}/replay), to one
 * endpoint or to each: after a receiver's outage, once it works again.
 */
export function ReplayForm({ endpoints, onReplayed }: ReplayFormProps) {
  const { api } = useConsole()
  const [endpointId, setEndpointId] = useState('')
  const [since, setSince] = useState(() => toLocalInput(new Date(Date.now() - DAY_MS)))
  const [asking, setAsking] = useState(false)
  const [notice, setNotice] = useState<NoticeText>()
  const targets = endpointId === '' ? endpoints : endpoints.filter((e) => e.id === endpointId)

  const ask = (event: FormEvent) => {
    event.preventDefault()
    setNotice(undefined)
    if (!localInputToRfc3339(since))
      setNotice({ kind: 'error', text: 'Enter the date and time to replay from.' })
    else setAsking(true)
  }

  const replay = async () => {
    let replayed = 0
    try {
      for (const endpoint of targets) {
        const result = await api.post<{ replayed: number }>(`/webhooks/${endpoint.id}/replay`, {
          since: localInputToRfc3339(since),
        })
        replayed += result.replayed
      }
    } catch (err) {
      setNotice({ kind: 'error', text: errorMessage(err) })
      return
    }
    setNotice({
      kind: 'success',
      text:
        replayed === 0
          ? 'There was no failed delivery to send again in that time.'
          : `${plural(replayed, 'failed delivery', 'failed deliveries')} will be sent again now.`,
    })
    onReplayed()
  }

  return (
    <section className="card">
      <h2>Replay failed deliveries</h2>
      <p>
        After an endpoint was down, send again every delivery that failed or was given up on since a time.
        Each is sent with its original webhook-id, so a receiver that already has it can ignore it.
      </p>
      <LastNotice notice={notice} />
      <form className="filters" onSubmit={ask}>
        <SelectField
          label="Endpoint to replay"
          value={endpointId}
          onChange={setEndpointId}
          choices={[
            { value: '', label: 'Every endpoint' },
            ...endpoints.map((e) => ({ value: e.id, label: e.url })),
          ]}
        />
        <TextField label="Failed since" type="datetime-local" required value={since} onChange={setSince} />
        <button type="submit" disabled={endpoints.length === 0}>
          Replay failed deliveries
        </button>
      </form>
      {asking ? (
        <ConfirmDialog
          title="Replay failed deliveries?"
          confirmLabel="Replay"
          onClose={() => setAsking(false)}
          onConfirm={replay}
        >
          <p>
            Every failed or given-up delivery since {since.replace('T', ' ')} to{' '}
            {endpointId === '' ? plural(targets.length, 'endpoint') : (targets[0]?.url ?? 'this endpoint')}{' '}
            will be sent again now.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  )
}
