import { useState } from 'react'
import type { ApiKeySummary, CreatedApiKey } from './api-types.js'
import { ConfirmDialog } from './confirm-dialog.js'
import { useConsole } from './console-context.js'
import { CredentialDialog } from './credential-dialog.js'
import type { Column } from './data-table.js'
import { EmptyState } from './empty-state.js'
import { LastNotice } from './last-notice.js'
import { PageAction } from './page-action.js'
import { PageLayout } from './page-layout.js'
import { PagedTable } from './paged-table.js'
import { SecretRevealDialog } from './secret-reveal-dialog.js'
import { SelectField } from './select-field.js'
import { StatusBadge } from './status-badge.js'
import { TimeText } from './time-text.js'
import { useListNotice } from './use-list-notice.js'
import { usePagedList } from './use-paged-list.js'

const DAY_SECONDS = 86_400
const EXPIRY_CHOICES = [
  { value: String(30 * DAY_SECONDS), label: '30 days' },
  { value: String(90 * DAY_SECONDS), label: '90 days (recommended)' },
  { value: String(365 * DAY_SECONDS), label: '1 year' },
  { value: String(2 * 365 * DAY_SECONDS), label: '2 years (the longest)' },
]
const STATUS_TEXT = { active: 'Active', expired: 'Expired', revoked: 'Revoked' } as const

type Open =
  | { kind: 'create' }
  | { kind: 'created'; key: CreatedApiKey }
  | { kind: 'revoke'; key: ApiKeySummary }

const keyName = (key: ApiKeySummary) => key.name || key.prefix

const COLUMNS: Column<ApiKeySummary>[] = [
  { heading: 'Name', cell: (key) => key.name || <span className="muted">Unnamed</span> },
  { heading: 'Starts with', cell: (key) => <code>{key.prefix}…</code> },
  { heading: 'Scopes', cell: (key) => key.scopes.join(', ') },
  {
    heading: 'Status',
    cell: (key) => <StatusBadge status={key.status} label={STATUS_TEXT[key.status]} />,
  },
  { heading: 'Last used', cell: (key) => <TimeText value={key.lastUsedAt} /> },
  { heading: 'Expires', cell: (key) => <TimeText value={key.expiresAt} /> },
  { heading: 'Limit', cell: (key) => `${key.rateLimitPerMinute.toLocaleString()}/min` },
]

/** API keys: create (the key shown once), list with last use and expiry, revoke after a confirmation. */
export function ApiKeysPage() {
  const { api } = useConsole()
  const list = usePagedList<ApiKeySummary>('/api-keys')
  const [open, setOpen] = useState<Open>()
  const { notice, changed } = useListNotice(list)
  const close = () => setOpen(undefined)

  return (
    <PageLayout
      title="API keys"
      actions={<PageAction label="Create API key" onClick={() => setOpen({ kind: 'create' })} />}
      lead={
        <>
          An API key lets a server of yours (payroll, HR) use the Hajri API: send it as{' '}
          <code>Authorization: Bearer hjk_…</code>. Keys are for servers only; Hajri refuses them from a web
          browser.
        </>
      }
    >
      <LastNotice notice={notice} />
      <PagedTable
        list={list}
        empty={
          <EmptyState title="No API keys yet" forViewers="An owner or admin can create one.">
            Create one for each system that calls the Hajri API.
          </EmptyState>
        }
        caption="API keys"
        columns={COLUMNS}
        rowKey={(key) => key.id}
        actions={(key) =>
          key.status === 'active' ? (
            <button
              type="button"
              className="button-danger"
              onClick={() => setOpen({ kind: 'revoke', key })}
              aria-label={`Revoke ${keyName(key)}`}
            >
              Revoke
            </button>
          ) : null
        }
      />

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
        <SecretRevealDialog
          title="API key created"
          secretLabel={`API key ${open.key.name}`}
          secret={open.key.key}
          doneLabel="I have stored the key"
          onClose={close}
        >
          <p>Use it from your server:</p>
          <pre className="code-block">
            {`curl -H "Authorization: Bearer ${open.key.key.slice(0, 8)}…" \\\n  ${window.location.origin}/api/public/v1/employees`}
          </pre>
        </SecretRevealDialog>
      ) : null}
      {open?.kind === 'revoke' ? (
        <ConfirmDialog
          title="Revoke this API key?"
          confirmLabel="Revoke key"
          danger
          onClose={close}
          onConfirm={async () => {
            await api.post(`/api-keys/${open.key.id}/revoke`)
            changed(`The key ${keyName(open.key)} is revoked.`)
          }}
        >
          <p>
            Every system using <strong>{keyName(open.key)}</strong> (starts with{' '}
            <code>{open.key.prefix}</code>) is refused from its next request. This cannot be undone: to use
            the API again, they need a new key.
          </p>
        </ConfirmDialog>
      ) : null}
    </PageLayout>
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
  const [expiresInSeconds, setExpiresInSeconds] = useState(String(90 * DAY_SECONDS))
  return (
    <CredentialDialog
      title="Create an API key"
      noun="key"
      nameHint="Which system uses it, e.g. “Payroll export”."
      initialScope="employees:read"
      submitLabel="Create key"
      create={(fields) =>
        api.post<CreatedApiKey>('/api-keys', { ...fields, expiresInSeconds: Number(expiresInSeconds) })
      }
      onCreated={onCreated}
      onClose={onClose}
    >
      <SelectField
        label="Expires after"
        hint="An expired key stops working; create a new one before then."
        value={expiresInSeconds}
        onChange={setExpiresInSeconds}
        choices={EXPIRY_CHOICES}
      />
    </CredentialDialog>
  )
}
