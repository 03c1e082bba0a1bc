import { useState } from 'react'
import { errorMessage } from './api-client.js'
import type { WebhookEndpoint } from './api-types.js'
import { ConfirmDialog } from './confirm-dialog.js'
import { useConsole } from './console-context.js'
import { Dialog } from './dialog.js'
import { EmptyState } from './empty-state.js'
import { EndpointForm } from './endpoint-form.js'
import { formatDateTime } from './format.js'
import { Link } from './link.js'
import { ListLoading } from './list-loading.js'
import { Notice, type NoticeKind } from './notice.js'
import { RotateSecretDialog } from './rotate-secret-dialog.js'
import { ShownOnceSecret } from './shown-once-secret.js'
import { StatusBadge } from './status-badge.js'
import { TimeText } from './time-text.js'
import { useEventCatalog } from './use-event-catalog.js'
import { usePagedList } from './use-paged-list.js'

type Open =
  | { kind: 'create' }
  | { kind: 'edit'; endpoint: WebhookEndpoint }
  | { kind: 'secret'; endpoint: WebhookEndpoint; secret: string; created: boolean }
  | { kind: 'reveal'; endpoint: WebhookEndpoint }
  | { kind: 'rotate'; endpoint: WebhookEndpoint }
  | { kind: 'delete'; endpoint: WebhookEndpoint }

const STATUS_TEXT = { active: 'Active', paused: 'Paused', disabled: 'Disabled' } as const

/** Webhook endpoints: add, change, pause and resume, test, reveal or rotate the secret, delete. */
export function WebhooksPage() {
  const { api, canWrite } = useConsole()
  const list = usePagedList<WebhookEndpoint>('/webhooks')
  const catalog = useEventCatalog()
  const [open, setOpen] = useState<Open>()
  const [notice, setNotice] = useState<{ kind: NoticeKind; text: string; endpointId?: string }>()
  const close = () => setOpen(undefined)
  /** Closes a dialog unless it has already given way to another (a confirmation to the secret it showed). */
  const closeIf = (kind: Open['kind']) => setOpen((current) => (current?.kind === kind ? undefined : current))
  const path = (endpoint: WebhookEndpoint, action = '') => `/webhooks/${endpoint.id}${action}`

  const act = async (endpoint: WebhookEndpoint, action: 'pause' | 'resume' | 'test') => {
    setNotice(undefined)
    try {
      if (action === 'test') {
        const sent = await api.post<{ messageId: string }>(path(endpoint, '/test'))
        setNotice({
          kind: 'success',
          text: `Test event sent to ${endpoint.url} (webhook-id ${sent.messageId}). It appears in the delivery log in a few seconds.`,
          endpointId: endpoint.id,
        })
      } else {
        await api.post(path(endpoint, `/${action}`))
        setNotice({
          kind: 'success',
          text:
            action === 'pause'
              ? `${endpoint.url} is paused. Events for it are kept and sent, in order, when you resume it.`
              : `${endpoint.url} is active again. Events held while it was paused go out now.`,
        })
        list.reload()
      }
    } catch (err) {
      setNotice({ kind: 'error', text: errorMessage(err) })
    }
  }

  return (
    <section>
      <div className="page-header">
        <h1 tabIndex={-1}>Webhooks</h1>
        {canWrite ? (
          <button type="button" className="button-primary" onClick={() => setOpen({ kind: 'create' })}>
            Add endpoint
          </button>
        ) : null}
      </div>
      <p className="lead">
        Hajri sends a signed HTTP POST to each endpoint when something happens: a punch, a new employee, a
        revoked key. Check every request's signature with the endpoint's signing secret (
        <a href="https://www.standardwebhooks.com/" rel="noreferrer">
          Standard Webhooks
        </a>
        ).
      </p>
      {notice ? (
        <Notice kind={notice.kind}>
          {notice.text}{' '}
          {notice.endpointId ? (
            <Link to={`/deliveries?endpointId=${notice.endpointId}`}>See its deliveries</Link>
          ) : null}
        </Notice>
      ) : null}
      {list.error ? <Notice kind="error">{list.error}</Notice> : null}
      <ListLoading list={list} />
      {list.loaded && list.items.length === 0 ? (
        <EmptyState title="No webhook endpoints yet">
          {canWrite
            ? 'Add one to have Hajri tell your HR system about punches and employees as they happen.'
            : 'An owner or admin can add one.'}
        </EmptyState>
      ) : null}
      <ul className="cards">
        {list.items.map((endpoint) => (
          <li key={endpoint.id} className="card">
            <div className="card-title">
              <h2 className="url">{endpoint.url}</h2>
              <StatusBadge status={endpoint.status} label={STATUS_TEXT[endpoint.status]} />
            </div>
            {endpoint.description ? <p>{endpoint.description}</p> : null}
            {endpoint.status === 'disabled' ? (
              <p className="warning-text">
                Hajri stopped sending to it{endpoint.disabledReason ? `: ${endpoint.disabledReason}` : ''}.
                Resume it once the receiver works again.
              </p>
            ) : null}
            {endpoint.failingSince ? (
              <p className="warning-text">Failing since {formatDateTime(endpoint.failingSince)}.</p>
            ) : null}
            <dl className="facts">
              <dt>Events</dt>
              <dd>{endpoint.events.length === 0 ? 'Every event' : endpoint.events.join(', ')}</dd>
              <dt>Signing secret</dt>
              <dd>
                {endpoint.secrets.map((s) => (
                  <span key={s.id} className="secret-fact">
                    {s.expiresAt ? `Previous, signs until ${formatDateTime(s.expiresAt)}` : 'Current'}, made{' '}
                    {formatDateTime(s.createdAt)}
                  </span>
                ))}
              </dd>
              <dt>Added</dt>
              <dd>
                <TimeText value={endpoint.createdAt} />
              </dd>
              <dt>Id</dt>
              <dd>
                <code>{endpoint.id}</code>
              </dd>
            </dl>
            <div className="actions">
              <Link to={`/deliveries?endpointId=${endpoint.id}`}>Deliveries</Link>
              {canWrite ? (
                <>
                  <button type="button" onClick={() => void act(endpoint, 'test')}>
                    Send test event
                  </button>
                  {endpoint.status === 'active' ? (
                    <button type="button" onClick={() => void act(endpoint, 'pause')}>
                      Pause
                    </button>
                  ) : (
                    <button type="button" onClick={() => void act(endpoint, 'resume')}>
                      Resume
                    </button>
                  )}
                  <button type="button" onClick={() => setOpen({ kind: 'edit', endpoint })}>
                    Edit
                  </button>
                  <button type="button" onClick={() => setOpen({ kind: 'reveal', endpoint })}>
                    Reveal secret
                  </button>
                  <button type="button" onClick={() => setOpen({ kind: 'rotate', endpoint })}>
                    Rotate secret
                  </button>
                  <button
                    type="button"
                    className="button-danger"
                    onClick={() => setOpen({ kind: 'delete', endpoint })}
                  >
                    Delete
                  </button>
                </>
              ) : null}
            </div>
          </li>
        ))}
      </ul>

      {open?.kind === 'create' ? (
        <Dialog title="Add a webhook endpoint" onClose={close} wide>
          <EndpointForm
            initial={{ url: '', description: '', events: [] }}
            catalog={catalog}
            submitLabel="Add endpoint"
            onCancel={close}
            onSubmit={async (fields) => {
              const created = await api.post<WebhookEndpoint & { secret: string }>('/webhooks', fields)
              list.reload()
              setOpen({ kind: 'secret', endpoint: created, secret: created.secret, created: true })
            }}
          />
        </Dialog>
      ) : null}
      {open?.kind === 'edit' ? (
        <Dialog title="Change the endpoint" onClose={close} wide>
          <EndpointForm
            initial={{
              url: open.endpoint.url,
              description: open.endpoint.description,
              events: open.endpoint.events,
            }}
            catalog={catalog}
            submitLabel="Save changes"
            onCancel={close}
            onSubmit={async (fields) => {
              await api.patch(path(open.endpoint), fields)
              list.reload()
              setNotice({ kind: 'success', text: `${fields.url} was saved.` })
              close()
            }}
          />
        </Dialog>
      ) : null}
      {open?.kind === 'secret' ? (
        <Dialog title={open.created ? 'Endpoint added' : 'Signing secret'} onClose={close}>
          <ShownOnceSecret label={`Signing secret of ${open.endpoint.url}`} value={open.secret}>
            <p>
              Give it to the system that receives the events, so it can check each request came from Hajri.
              You can show it again here later; each time is recorded in the audit log.
            </p>
          </ShownOnceSecret>
          <div className="dialog-actions">
            <button type="button" className="button-primary" onClick={close} data-initial-focus>
              Done
            </button>
          </div>
        </Dialog>
      ) : null}
      {open?.kind === 'reveal' ? (
        <ConfirmDialog
          title="Show the signing secret?"
          confirmLabel="Show secret"
          onClose={() => closeIf('reveal')}
          onConfirm={async () => {
            const { secret } = await api.post<{ secret: string }>(path(open.endpoint, '/reveal-secret'))
            setOpen({ kind: 'secret', endpoint: open.endpoint, secret, created: false })
          }}
        >
          <p>
            The secret of <strong>{open.endpoint.url}</strong> will be shown on screen. That you looked is
            recorded in the audit log.
          </p>
        </ConfirmDialog>
      ) : null}
      {open?.kind === 'rotate' ? (
        <RotateSecretDialog
          what={`the endpoint ${open.endpoint.url}`}
          secretLabel={`New signing secret of ${open.endpoint.url}`}
          onClose={() => {
            close()
            list.reload()
          }}
          onRotate={async (graceSeconds) =>
            api.post<{ secret: string; previousSecretsExpireAt: string }>(
              path(open.endpoint, '/rotate-secret'),
              {
                graceSeconds,
              },
            )
          }
        />
      ) : null}
      {open?.kind === 'delete' ? (
        <ConfirmDialog
          title="Delete this endpoint?"
          confirmLabel="Delete endpoint"
          danger
          onClose={close}
          onConfirm={async () => {
            await api.delete(path(open.endpoint))
            setNotice({ kind: 'success', text: `${open.endpoint.url} was deleted.` })
            list.reload()
          }}
        >
          <p>
            Hajri stops sending events to <strong>{open.endpoint.url}</strong>, including any still waiting to
            be retried. Its past deliveries stay in the log. This cannot be undone; to stop for a while, pause
            it instead.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  )
}
