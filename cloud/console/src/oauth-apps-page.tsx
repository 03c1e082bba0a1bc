import { useCallback, useState } from 'react'
import type { ApiClient } from './api-client.js'
import type { AuditEntry, CreatedOAuthApp, OAuthAppSummary, Page, RotatedClientSecret } from './api-types.js'
import { AuditTable } from './audit-table.js'
import { Card } from './card.js'
import { ConfirmDialog } from './confirm-dialog.js'
import { useConsole } from './console-context.js'
import { CopyButton } from './copy-button.js'
import { CredentialDialog } from './credential-dialog.js'
import { Dialog } from './dialog.js'
import { EmptyState } from './empty-state.js'
import { ErrorNotice } from './error-notice.js'
import { formatDateTime } from './format.js'
import { LastNotice } from './last-notice.js'
import { PageAction } from './page-action.js'
import { PageLayout } from './page-layout.js'
import { PagedItems } from './paged-items.js'
import { RotateSecretDialog } from './rotate-secret-dialog.js'
import { SecretRevealDialog } from './secret-reveal-dialog.js'
import { TimeText } from './time-text.js'
import { useListNotice } from './use-list-notice.js'
import { useLoaded } from './use-loaded.js'
import { usePagedList } from './use-paged-list.js'
import { useUserEmails } from './use-user-emails.js'

type Open =
  | { kind: 'create' }
  | { kind: 'created'; app: CreatedOAuthApp }
  | { kind: 'rotate'; app: OAuthAppSummary }
  | { kind: 'revoke'; app: OAuthAppSummary }
  | { kind: 'history'; app: OAuthAppSummary }

/** OAuth apps (client credentials, for site agents and services): create, rotate the secret, revoke, history. */
export function OAuthAppsPage() {
  const { api, canWrite } = useConsole()
  const list = usePagedList<OAuthAppSummary>('/oauth-apps')
  const [open, setOpen] = useState<Open>()
  const { notice, changed } = useListNotice(list)
  const close = () => setOpen(undefined)
  const tokenUrl = `${window.location.origin}/api/oauth/token`

  return (
    <PageLayout
      title="OAuth apps"
      actions={<PageAction label="Create OAuth app" onClick={() => setOpen({ kind: 'create' })} />}
      lead={
        <>
          An OAuth app has a client id and secret, which it exchanges for an access token valid for an hour at{' '}
          <code>{tokenUrl}</code> (client credentials). Site agents use one each.
        </>
      }
    >
      <LastNotice notice={notice} />
      <PagedItems
        list={list}
        empty={
          <EmptyState title="No OAuth apps yet" forViewers="An owner or admin can create one.">
            Create one for each site agent or service that should get its own access tokens.
          </EmptyState>
        }
      >
        {(apps) => (
          <ul className="cards">
            {apps.map((app) => (
              <Card
                key={app.id}
                title={app.name}
                status={app.status}
                statusLabel={app.status === 'active' ? 'Active' : 'Revoked'}
                actions={
                  <>
                    <button type="button" onClick={() => setOpen({ kind: 'history', app })}>
                      History
                    </button>
                    {canWrite && app.status === 'active' ? (
                      <>
                        <button type="button" onClick={() => setOpen({ kind: 'rotate', app })}>
                          Rotate secret
                        </button>
                        <button
                          type="button"
                          className="button-danger"
                          onClick={() => setOpen({ kind: 'revoke', app })}
                        >
                          Revoke
                        </button>
                      </>
                    ) : null}
                  </>
                }
              >
                <dl className="facts">
                  <ClientIdFact clientId={app.clientId} />
                  <dt>Scopes</dt>
                  <dd>{app.scopes.join(', ')}</dd>
                  <dt>Limit</dt>
                  <dd>{app.rateLimitPerMinute.toLocaleString()} requests a minute</dd>
                  <dt>Secrets</dt>
                  <dd>
                    {app.secrets.length === 0 ? <span className="muted">None</span> : null}
                    {app.secrets.map((s) => (
                      <span key={s.id} className="secret-fact">
                        <code>{s.prefix}…</code>{' '}
                        {s.expiresAt ? `stops working ${formatDateTime(s.expiresAt)}` : 'current'}, made{' '}
                        {formatDateTime(s.createdAt)}
                      </span>
                    ))}
                  </dd>
                  <dt>Created</dt>
                  <dd>
                    <TimeText value={app.createdAt} />
                  </dd>
                  {app.revokedAt ? (
                    <>
                      <dt>Revoked</dt>
                      <dd>
                        <TimeText value={app.revokedAt} />
                      </dd>
                    </>
                  ) : null}
                </dl>
              </Card>
            ))}
          </ul>
        )}
      </PagedItems>

      {open?.kind === 'create' ? (
        <CredentialDialog
          title="Create an OAuth app"
          noun="app"
          nameHint="Which site or service uses it, e.g. “Pune plant agent”."
          initialScope="attendance:write"
          submitLabel="Create app"
          create={(fields) => api.post<CreatedOAuthApp>('/oauth-apps', fields)}
          onCreated={(app) => {
            list.reload()
            setOpen({ kind: 'created', app })
          }}
          onClose={close}
        />
      ) : null}
      {open?.kind === 'created' ? (
        <SecretRevealDialog
          title="OAuth app created"
          intro={
            <dl className="facts">
              <ClientIdFact clientId={open.app.clientId} />
              <dt>Token endpoint</dt>
              <dd>
                <code>{tokenUrl}</code>
              </dd>
            </dl>
          }
          secretLabel="Client secret"
          secret={open.app.clientSecret}
          doneLabel="I have stored the secret"
          onClose={close}
        />
      ) : null}
      {open?.kind === 'rotate' ? (
        <RotateSecretDialog
          what={`the OAuth app ${open.app.name}`}
          secretLabel={`New client secret of ${open.app.name}`}
          onClose={() => {
            close()
            list.reload()
          }}
          onRotate={async (graceSeconds) => {
            const rotated = await api.post<RotatedClientSecret>(`/oauth-apps/${open.app.id}/rotate-secret`, {
              graceSeconds,
            })
            return { secret: rotated.clientSecret, previousSecretsExpireAt: rotated.previousSecretsExpireAt }
          }}
        />
      ) : null}
      {open?.kind === 'revoke' ? (
        <ConfirmDialog
          title="Revoke this OAuth app?"
          confirmLabel="Revoke app"
          danger
          onClose={close}
          onConfirm={async () => {
            await api.post(`/oauth-apps/${open.app.id}/revoke`)
            changed(`${open.app.name} is revoked, with every access token it held.`)
          }}
        >
          <p>
            <strong>{open.app.name}</strong> can no longer get access tokens, and the tokens it has stop
            working now. This cannot be undone.
          </p>
        </ConfirmDialog>
      ) : null}
      {open?.kind === 'history' ? <AppHistoryDialog app={open.app} onClose={close} /> : null}
    </PageLayout>
  )
}

/** An app's client id, to copy into the agent's or service's configuration. */
function ClientIdFact({ clientId }: { clientId: string }) {
  return (
    <>
      <dt>Client id</dt>
      <dd>
        <code>{clientId}</code> <CopyButton value={clientId} label="Copy client id" />
      </dd>
    </>
  )
}

/** What happened to one app: created, secrets rotated, tokens issued, revoked (GET /audit?targetId=). */
function AppHistoryDialog({ app, onClose }: { app: OAuthAppSummary; onClose: () => void }) {
  const emails = useUserEmails()
  const history = useLoaded(
    useCallback(
      async (api: ApiClient) => {
        // What was done to the app, and what it did itself (the tokens it obtained), newest first.
        const [about, by] = await Promise.all([
          api.get<Page<AuditEntry>>('/audit', { targetId: app.id, limit: 200 }),
          api.get<Page<AuditEntry>>('/audit', { actor: `oauth_app:${app.id}`, limit: 200 }),
        ])
        const all = new Map([...about.data, ...by.data].map((e) => [e.id, e]))
        return [...all.values()].sort((a, b) => b.occurredAt.localeCompare(a.occurredAt))
      },
      [app.id],
    ),
  )
  const entries = history.data
  return (
    <Dialog title={`History of ${app.name}`} onClose={onClose} wide>
      <ErrorNotice error={history.error} />
      {entries === undefined && !history.error ? <p aria-busy="true">Loading…</p> : null}
      {entries?.length === 0 ? <p>Nothing recorded for this app yet.</p> : null}
      {entries && entries.length > 0 ? (
        <AuditTable entries={entries} emails={emails} caption={`Audit history of ${app.name}`} />
      ) : null}
      <div className="dialog-actions">
        <button type="button" onClick={onClose} data-initial-focus>
          Close
        </button>
      </div>
    </Dialog>
  )
}
