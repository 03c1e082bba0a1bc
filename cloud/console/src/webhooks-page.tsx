import { useState } from 'react'
import { errorMessage } from './api-client.js'
import type { WebhookEndpoint } from './api-types.js'
import { Card } from './card.js'
import { ConfirmDialog } from './confirm-dialog.js'
import { useConsole } from './console-context.js'
import { EmptyState } from './empty-state.js'
import { EndpointDialog } from './endpoint-dialog.js'
import { formatDateTime } from './format.js'
import { LastNotice } from './last-notice.js'
import { Link } from './link.js'
import { PageAction } from './page-action.js'
import { PageLayout } from './page-layout.js'
import { PagedItems } from './paged-items.js'
import { RotateSecretDialog } from './rotate-secret-dialog.js'
import { SecretRevealDialog } from './secret-reveal-dialog.js'
import { TimeText } from './time-text.js'
import { useEventCatalog } from './use-event-catalog.js'
import { useListNotice } from './use-list-notice.js'
import { usePagedList } from './use-paged-list.js'

type Open =
  | { kind: 'create' }
  | { kind: 'edit'; endpoint: WebhookEndpoint }
  | { kind: 'secret'; endpoint: WebhookEndpoint; secret: string; created: boolean }
  | { kind: 'reveal'; endpoint: WebhookEndpoint }
  | { kind: 'rotate'; endpoint: WebhookEndpoint }
  | { kind: 'delete'; endpoint: WebhookEndpoint }

const STATUS_TEXT = { active: 'Active', paused: 'Paused', disabled: 'Disabled' } as const
/** The delivery log, filtered to one endpoint. */
const deliveriesOf = (endpoint: WebhookEndpoint) => `/deliveries?endpointId=${endpoint.id}`

/** Webhook endpoints: add, change, pause and resume, test, reveal or rotate the secret, delete. */
export function WebhooksPage() {
  const { api, canWrite } = useConsole()
  const list = usePagedList<WebhookEndpoint>('/webhooks')
  const catalog = useEventCatalog()
  const [open, setOpen] = useState<Open>()
  const { notice, setNotice, changed } = useListNotice(list)
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
          link: { to: deliveriesOf(endpoint), label: 'See its deliveries' },
        })
      } else {
        await api.post(path(endpoint, `/${action}`))
        changed(
          action === 'pause'
            ? `${endpoint.url} is paused. Events for it are kept and sent, in order, when you resume it.`
            : `${endpoint.url} is active again. Events held while it was paused go out now.`,
        )
      }
    } catch (err) {
      setNotice({ kind: 'error', text: errorMessage(err) })
    }
  }

  return (
    <PageLayout
      title="Webhooks"
      actions={<PageAction label="Add endpoint" onClick={() => setOpen({ kind: 'create' })} />}
      lead={
        <>
          Hajri sends a signed HTTP POST to each endpoint when something happens: a punch, a new employee, a
          revoked key. Check every request's signature with the endpoint's signing secret (
          <a href="https://www.standardwebhooks.com/" rel="noreferrer">
            Standard Webhooks
          </a>
          ).
        </>
      }
    >
      <LastNotice notice={notice} />
      <PagedItems
        list={list}
        empty={
          <EmptyState title="No webhook endpoints yet" forViewers="An owner or admin can add one.">
            Add one to have Hajri tell your HR system about punches and employees as they happen.
          </EmptyState>
        }
      >
        {(endpoints) => (
          <ul className="cards">
            {endpoints.map((endpoint) => (
              <Card
                key={endpoint.id}
                title={endpoint.url}
                titleClassName="url"
                status={endpoint.status}
                statusLabel={STATUS_TEXT[endpoint.status]}
                actions={
                  <>
                    <Link to={deliveriesOf(endpoint)}>Deliveries</Link>
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
                  </>
                }
              >
                {endpoint.description ? <p>{endpoint.description}</p> : null}
                {endpoint.status === 'disabled' ? (
                  <p className="warning-text">
                    Hajri stopped sending to it{endpoint.disabledReason ? `: ${endpoint.disabledReason}` : ''}
                    . Resume it once the receiver works again.
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
                        {s.expiresAt ? `Previous, signs until ${formatDateTime(s.expiresAt)}` : 'Current'},
                        made {formatDateTime(s.createdAt)}
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
              </Card>
            ))}
          </ul>
        )}
      </PagedItems>

      {open?.kind === 'create' ? (
        <EndpointDialog
          title="Add a webhook endpoint"
          initial={{ url: '', description: '', events: [] }}
          catalog={catalog}
          submitLabel="Add endpoint"
          onClose={close}
          onSubmit={async (fields) => {
            const created = await api.post<WebhookEndpoint & { secret: string }>('/webhooks', fields)
            list.reload()
            setOpen({ kind: 'secret', endpoint: created, secret: created.secret, created: true })
          }}
        />
      ) : null}
      {open?.kind === 'edit' ? (
        <EndpointDialog
          title="Change the endpoint"
          initial={{
            url: open.endpoint.url,
            description: open.endpoint.description,
            events: open.endpoint.events,
          }}
          catalog={catalog}
          submitLabel="Save changes"
          onClose={close}
          onSubmit={async (fields) => {
            await api.patch(path(open.endpoint), fields)
            changed(`${fields.url} was saved.`)
            close()
          }}
        />
      ) : null}
      {open?.kind === 'secret' ? (
        <SecretRevealDialog
          title={open.created ? 'Endpoint added' : 'Signing secret'}
          secretLabel={`Signing secret of ${open.endpoint.url}`}
          secret={open.secret}
          advice={
            <p>
              Give it to the system that receives the events, so it can check each request came from Hajri.
              You can show it again here later; each time is recorded in the audit log.
            </p>
          }
          onClose={close}
        />
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
            changed(`${open.endpoint.url} was deleted.`)
          }}
        >
          <p>
            Hajri stops sending events to <strong>{open.endpoint.url}</strong>, including any still waiting to
            be retried. Its past deliveries stay in the log. This cannot be undone; to stop for a while, pause
            it instead.
          </p>
        </ConfirmDialog>
      ) : null}
    </PageLayout>
  )
}
