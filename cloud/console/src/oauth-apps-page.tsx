import { type FormEvent, useEffect, useState } from 'react'
import { errorMessage } from './api-client.js'
import type {
  AuditEntry,
  CreatedOAuthApp,
  OAuthAppSummary,
  Page,
  RotatedClientSecret,
  Scope,
} from './api-types.js'
import { AuditTable } from './audit-table.js'
import { ConfirmDialog } from './confirm-dialog.js'
import { useConsole } from './console-context.js'
import { CopyButton } from './copy-button.js'
import { Dialog } from './dialog.js'
import { EmptyState } from './empty-state.js'
import { Field } from './field.js'
import { formatDateTime } from './format.js'
import { ListLoading } from './list-loading.js'
import { LoadMoreButton } from './load-more-button.js'
import { Notice, type NoticeKind } from './notice.js'
import { RotateSecretDialog } from './rotate-secret-dialog.js'
import { ScopePicker } from './scope-picker.js'
import { ShownOnceSecret } from './shown-once-secret.js'
import { StatusBadge } from './status-badge.js'
import { TimeText } from './time-text.js'
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
  const [notice, setNotice] = useState<{ kind: NoticeKind; text: string }>()
  const close = () => setOpen(undefined)
  const tokenUrl = `${window.location.origin}/api/oauth/token`

  return (
    <section>
      <div className="page-header">
        <h1 tabIndex={-1}>OAuth apps</h1>
        {canWrite ? (
          <button type="button" className="button-primary" onClick={() => setOpen({ kind: 'create' })}>
            Create OAuth app
          </button>
        ) : null}
      </div>
      <p className="lead">
        An OAuth app has a client id and secret, which it exchanges for an access token valid for an hour at{' '}
        <code>{tokenUrl}</code> (client credentials). Site agents use one each.
      </p>
      {notice ? <Notice kind={notice.kind}>{notice.text}</Notice> : null}
      {list.error ? <Notice kind="error">{list.error}</Notice> : null}
      <ListLoading list={list} />
      {list.loaded && list.items.length === 0 ? (
        <EmptyState title="No OAuth apps yet">
          {canWrite
            ? 'Create one for each site agent or service that should get its own access tokens.'
            : 'An owner or admin can create one.'}
        </EmptyState>
      ) : null}
      <ul className="cards">
        {list.items.map((app) => (
          <li key={app.id} className="card">
            <div className="card-title">
              <h2>{app.name}</h2>
              <StatusBadge status={app.status} label={app.status === 'active' ? 'Active' : 'Revoked'} />
            </div>
            <dl className="facts">
              <dt>Client id</dt>
              <dd>
                <code>{app.clientId}</code> <CopyButton value={app.clientId} label="Copy client id" />
              </dd>
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
            <div className="actions">
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
            </div>
          </li>
        ))}
      </ul>
      <LoadMoreButton list={list} />

      {open?.kind === 'create' ? (
        <CreateAppDialog
          onClose={close}
          onCreated={(app) => {
            list.reload()
            setOpen({ kind: 'created', app })
          }}
        />
      ) : null}
      {open?.kind === 'created' ? (
        <Dialog title="OAuth app created" onClose={close}>
          <dl className="facts">
            <dt>Client id</dt>
            <dd>
              <code>{open.app.clientId}</code> <CopyButton value={open.app.clientId} label="Copy client id" />
            </dd>
            <dt>Token endpoint</dt>
            <dd>
              <code>{tokenUrl}</code>
            </dd>
          </dl>
          <ShownOnceSecret label="Client secret" value={open.app.clientSecret} />
          <div className="dialog-actions">
            <button type="button" className="button-primary" onClick={close} data-initial-focus>
              I have stored the secret
            </button>
          </div>
        </Dialog>
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
            setNotice({
              kind: 'success',
              text: `${open.app.name} is revoked, with every access token it held.`,
            })
            list.reload()
          }}
        >
          <p>
            <strong>{open.app.name}</strong> can no longer get access tokens, and the tokens it has stop
            working now. This cannot be undone.
          </p>
        </ConfirmDialog>
      ) : null}
      {open?.kind === 'history' ? <AppHistoryDialog app={open.app} onClose={close} /> : null}
    </section>
  )
}

function CreateAppDialog({
  onClose,
  onCreated,
}: {
  onClose: () => void
  onCreated: (app: CreatedOAuthApp) => void
}) {
  const { api } = useConsole()
  const [name, setName] = useState('')
  const [scopes, setScopes] = useState<Scope[]>(['attendance:write'])
  const [limit, setLimit] = useState('600')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string>()

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    if (scopes.length === 0) {
      setError('Choose at least one scope: what the app may do.')
      return
    }
    setBusy(true)
    setError(undefined)
    try {
      onCreated(
        await api.post<CreatedOAuthApp>('/oauth-apps', {
          name: name.trim(),
          scopes,
          rateLimitPerMinute: Number(limit),
        }),
      )
    } catch (err) {
      setError(errorMessage(err))
      setBusy(false)
    }
  }

  return (
    <Dialog title="Create an OAuth app" onClose={onClose}>
      <form onSubmit={submit}>
        {error ? <Notice kind="error">{error}</Notice> : null}
        <Field label="Name" hint="Which site or service uses it, e.g. “Pune plant agent”.">
          <input
            required
            maxLength={100}
            value={name}
            onChange={(e) => setName(e.target.value)}
            data-initial-focus
          />
        </Field>
        <ScopePicker selected={scopes} onChange={setScopes} />
        <Field
          label="Requests per minute"
          hint="More than this in a minute are refused (429) until the minute ends."
        >
          <input
            type="number"
            required
            min={1}
            max={100000}
            step={1}
            value={limit}
            onChange={(e) => setLimit(e.target.value)}
          />
        </Field>
        <div className="dialog-actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button-primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create app'}
          </button>
        </div>
      </form>
    </Dialog>
  )
}

/** What happened to one app: created, secrets rotated, tokens issued, revoked (GET /audit?targetId=). */
function AppHistoryDialog({ app, onClose }: { app: OAuthAppSummary; onClose: () => void }) {
  const { api } = useConsole()
  const emails = useUserEmails()
  const [entries, setEntries] = useState<AuditEntry[]>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    // What was done to the app, and what it did itself (the tokens it obtained), newest first.
    Promise.all([
      api.get<Page<AuditEntry>>('/audit', { targetId: app.id, limit: 200 }),
      api.get<Page<AuditEntry>>('/audit', { actor: `oauth_app:${app.id}`, limit: 200 }),
    ]).then(
      ([about, by]) => {
        const all = new Map([...about.data, ...by.data].map((e) => [e.id, e]))
        setEntries([...all.values()].sort((a, b) => b.occurredAt.localeCompare(a.occurredAt)))
      },
      (err: unknown) => setError(errorMessage(err)),
    )
  }, [api, app.id])
  return (
    <Dialog title={`History of ${app.name}`} onClose={onClose} wide>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {entries === undefined && !error ? <p aria-busy="true">Loading…</p> : null}
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
