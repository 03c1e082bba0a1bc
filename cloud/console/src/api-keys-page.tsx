import { type FormEvent, useState } from 'react'
import { errorMessage } from './api-client.js'
import type { ApiKeySummary, CreatedApiKey, Scope } from './api-types.js'
import { ConfirmDialog } from './confirm-dialog.js'
import { useConsole } from './console-context.js'
import { Dialog } from './dialog.js'
import { EmptyState } from './empty-state.js'
import { Field } from './field.js'
import { ListLoading } from './list-loading.js'
import { LoadMoreButton } from './load-more-button.js'
import { Notice, type NoticeKind } from './notice.js'
import { ScopePicker } from './scope-picker.js'
import { ShownOnceSecret } from './shown-once-secret.js'
import { StatusBadge } from './status-badge.js'
import { TimeText } from './time-text.js'
import { usePagedList } from './use-paged-list.js'

const DAY = 86_400
const EXPIRY_CHOICES = [
  { seconds: 30 * DAY, label: '30 days' },
  { seconds: 90 * DAY, label: '90 days (recommended)' },
  { seconds: 365 * DAY, label: '1 year' },
  { seconds: 2 * 365 * DAY, label: '2 years (the longest)' },
]
const STATUS_TEXT = { active: 'Active', expired: 'Expired', revoked: 'Revoked' } as const

type Open =
  | { kind: 'create' }
  | { kind: 'created'; key: CreatedApiKey }
  | { kind: 'revoke'; key: ApiKeySummary }

/** API keys: create (the key shown once), list with last use and expiry, revoke after a confirmation. */
export function ApiKeysPage() {
  const { api, canWrite } = useConsole()
  const list = usePagedList<ApiKeySummary>('/api-keys')
  const [open, setOpen] = useState<Open>()
  const [notice, setNotice] = useState<{ kind: NoticeKind; text: string }>()
  const close = () => setOpen(undefined)

  return (
    <section>
      <div className="page-header">
        <h1 tabIndex={-1}>API keys</h1>
        {canWrite ? (
          <button type="button" className="button-primary" onClick={() => setOpen({ kind: 'create' })}>
            Create API key
          </button>
        ) : null}
      </div>
      <p className="lead">
        An API key lets a server of yours (payroll, HR) use the Hajri API: send it as{' '}
        <code>Authorization: Bearer hjk_…</code>. Keys are for servers only; Hajri refuses them from a web
        browser.
      </p>
      {notice ? <Notice kind={notice.kind}>{notice.text}</Notice> : null}
      {list.error ? <Notice kind="error">{list.error}</Notice> : null}
      <ListLoading list={list} />
      {list.loaded && list.items.length === 0 ? (
        <EmptyState title="No API keys yet">
          {canWrite
            ? 'Create one for each system that calls the Hajri API.'
            : 'An owner or admin can create one.'}
        </EmptyState>
      ) : null}
      {list.items.length > 0 ? (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">API keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Starts with</th>
                <th scope="col">Scopes</th>
                <th scope="col">Status</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col">Limit</th>
                {canWrite ? (
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {list.items.map((key) => (
                <tr key={key.id}>
                  <td>{key.name || <span className="muted">Unnamed</span>}</td>
                  <td>
                    <code>{key.prefix}…</code>
                  </td>
                  <td>{key.scopes.join(', ')}</td>
                  <td>
                    <StatusBadge status={key.status} label={STATUS_TEXT[key.status]} />
                  </td>
                  <td>
                    <TimeText value={key.lastUsedAt} />
                  </td>
                  <td>
                    <TimeText value={key.expiresAt} />
                  </td>
                  <td>{key.rateLimitPerMinute.toLocaleString()}/min</td>
                  {canWrite ? (
                    <td>
                      {key.status === 'active' ? (
                        <button
                          type="button"
                          className="button-danger"
                          onClick={() => setOpen({ kind: 'revoke', key })}
                          aria-label={`Revoke ${key.name || key.prefix}`}
                        >
                          Revoke
                        </button>
                      ) : null}
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <LoadMoreButton list={list} />

      {open?.kind === 'create' ? (
        <CreateKeyDialog
          onClose={close}
          onCreated={(key) => {
            list.reload()
            setOpen({ kind: 'created', key })
          }}
        />
      ) : null}
      {open?.kind === 'created' ? (
        <Dialog title="API key created" onClose={close}>
          <ShownOnceSecret label={`API key ${open.key.name}`} value={open.key.key} />
          <p>Use it from your server:</p>
          <pre className="code-block">
            {`curl -H "Authorization: Bearer ${open.key.key.slice(0, 8)}…" \\\n  ${window.location.origin}/api/public/v1/employees`}
          </pre>
          <div className="dialog-actions">
            <button type="button" className="button-primary" onClick={close} data-initial-focus>
              I have stored the key
            </button>
          </div>
        </Dialog>
      ) : null}
      {open?.kind === 'revoke' ? (
        <ConfirmDialog
          title="Revoke this API key?"
          confirmLabel="Revoke key"
          danger
          onClose={close}
          onConfirm={async () => {
            await api.post(`/api-keys/${open.key.id}/revoke`)
            setNotice({ kind: 'success', text: `The key ${open.key.name || open.key.prefix} is revoked.` })
            list.reload()
          }}
        >
          <p>
            Every system using <strong>{open.key.name || open.key.prefix}</strong> (starts with{' '}
            <code>{open.key.prefix}</code>) is refused from its next request. This cannot be undone: to use
            the API again, they need a new key.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  )
}

function CreateKeyDialog({
  onClose,
  onCreated,
}: {
  onClose: () => void
  onCreated: (key: CreatedApiKey) => void
}) {
  const { api } = useConsole()
  const [name, setName] = useState('')
  const [scopes, setScopes] = useState<Scope[]>(['employees:read'])
  const [expiresIn, setExpiresIn] = useState(90 * DAY)
  const [limit, setLimit] = useState('600')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string>()

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    if (scopes.length === 0) {
      setError('Choose at least one scope: what the key may do.')
      return
    }
    setBusy(true)
    setError(undefined)
    try {
      onCreated(
        await api.post<CreatedApiKey>('/api-keys', {
          name: name.trim(),
          scopes,
          expiresInSeconds: expiresIn,
          rateLimitPerMinute: Number(limit),
        }),
      )
    } catch (err) {
      setError(errorMessage(err))
      setBusy(false)
    }
  }

  return (
    <Dialog title="Create an API key" onClose={onClose}>
      <form onSubmit={submit}>
        {error ? <Notice kind="error">{error}</Notice> : null}
        <Field label="Name" hint="Which system uses it, e.g. “Payroll export”.">
          <input
            required
            maxLength={100}
            value={name}
            onChange={(e) => setName(e.target.value)}
            data-initial-focus
          />
        </Field>
        <ScopePicker selected={scopes} onChange={setScopes} />
        <Field label="Expires after" hint="An expired key stops working; create a new one before then.">
          <select value={expiresIn} onChange={(e) => setExpiresIn(Number(e.target.value))}>
            {EXPIRY_CHOICES.map((c) => (
              <option key={c.seconds} value={c.seconds}>
                {c.label}
              </option>
            ))}
          </select>
        </Field>
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
            {busy ? 'Creating…' : 'Create key'}
          </button>
        </div>
      </form>
    </Dialog>
  )
}
