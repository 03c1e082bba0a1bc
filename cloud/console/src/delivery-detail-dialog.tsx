import { useCallback, useEffect, useState } from 'react'
import { errorMessage } from './api-client.js'
import type { WebhookDeliveryDetail } from './api-types.js'
import { useConsole } from './console-context.js'
import { DELIVERY_STATUS_TEXT } from './delivery-status.js'
import { Dialog } from './dialog.js'
import { formatDateTime } from './format.js'
import { LastNotice, type NoticeText } from './last-notice.js'
import { StatusBadge } from './status-badge.js'
import { TimeText } from './time-text.js'

interface DeliveryDetailDialogProps {
  deliveryId: string
  endpointUrl: string | undefined
  onClose: () => void
  onRetried: () => void
}

/** One delivery: the request sent, every attempt and its answer, and a retry when it failed. */
export function DeliveryDetailDialog({
  deliveryId,
  endpointUrl,
  onClose,
  onRetried,
}: DeliveryDetailDialogProps) {
  const { api, canWrite } = useConsole()
  const [delivery, setDelivery] = useState<WebhookDeliveryDetail>()
  const [notice, setNotice] = useState<NoticeText>()
  const [busy, setBusy] = useState(false)

  const load = useCallback(async () => {
    try {
      setDelivery(await api.get<WebhookDeliveryDetail>(`/webhook-deliveries/${deliveryId}`))
    } catch (err) {
      setNotice({ kind: 'error', text: errorMessage(err) })
    }
  }, [api, deliveryId])

  useEffect(() => {
    void load()
  }, [load])

  const retry = async () => {
    setBusy(true)
    setNotice(undefined)
    try {
      await api.post(`/webhook-deliveries/${deliveryId}/retry`)
      setNotice({
        kind: 'success',
        text: 'Retry started: Hajri sends it again now. Refresh to see the new attempt. The retry is recorded in the audit log.',
      })
      onRetried()
      await load()
    } catch (err) {
      setNotice({ kind: 'error', text: errorMessage(err) })
    } finally {
      setBusy(false)
    }
  }

  const retryable = delivery && (delivery.status === 'failed' || delivery.status === 'exhausted')

  return (
    <Dialog title="Delivery" onClose={onClose} wide>
      <LastNotice notice={notice} />
      {delivery ? (
        <>
          <dl className="facts">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={delivery.status} label={DELIVERY_STATUS_TEXT[delivery.status]} />
            </dd>
            <dt>Event</dt>
            <dd>
              <code>{delivery.eventType}</code>
            </dd>
            <dt>Endpoint</dt>
            <dd className="url">{endpointUrl ?? delivery.endpointId}</dd>
            <dt>Created</dt>
            <dd>
              <TimeText value={delivery.createdAt} />
            </dd>
            <dt>Next attempt</dt>
            <dd>
              <TimeText value={delivery.nextAttemptAt} empty="None scheduled" />
            </dd>
            <dt>Delivery id</dt>
            <dd>
              <code>{delivery.id}</code>
            </dd>
          </dl>

          <h3>Request</h3>
          <p>
            <code>POST {endpointUrl ?? ''}</code> with <code>webhook-id: {delivery.messageId}</code> (the same
            on every attempt), <code>webhook-timestamp</code> and <code>webhook-signature</code>;{' '}
            {delivery.payload.size} bytes of JSON:
          </p>
          <pre className="code-block">{prettyJson(delivery.body)}</pre>

          <h3>Attempts</h3>
          {delivery.attemptLog.length === 0 ? (
            <p>No attempt yet: it is waiting for its first.</p>
          ) : (
            <ol className="attempts">
              {delivery.attemptLog.map((a) => (
                <li key={a.number} className="attempt">
                  <p>
                    <strong>Attempt {a.number}</strong> (
                    {a.trigger === 'manual' ? 'retried by hand' : 'automatic'}), {formatDateTime(a.at)},{' '}
                    {a.durationMs} ms:{' '}
                    {a.responseStatus !== null ? (
                      <StatusBadge
                        status={a.responseStatus < 300 ? 'succeeded' : 'failed'}
                        label={`HTTP ${a.responseStatus}`}
                      />
                    ) : (
                      <StatusBadge status="failed" label="No answer" />
                    )}
                  </p>
                  {a.error ? <p className="warning-text">{a.error}</p> : null}
                  {a.responseBody ? <pre className="code-block">{a.responseBody}</pre> : null}
                </li>
              ))}
            </ol>
          )}
        </>
      ) : notice ? null : (
        <p aria-busy="true">Loading…</p>
      )}
      <div className="dialog-actions">
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
        {canWrite && retryable ? (
          <button type="button" className="button-primary" onClick={() => void retry()} disabled={busy}>
            {busy ? 'Retrying…' : 'Retry now'}
          </button>
        ) : null}
        <button type="button" onClick={onClose} data-initial-focus>
          Close
        </button>
      </div>
    </Dialog>
  )
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}
