import { useState } from 'react'
import type { ConsoleUser, InvitedUser, Role } from './api-types.js'
import { ConfirmDialog } from './confirm-dialog.js'
import { useConsole } from './console-context.js'
import type { Column } from './data-table.js'
import { EmptyState } from './empty-state.js'
import { FormDialog } from './form-dialog.js'
import { LastNotice } from './last-notice.js'
import { PageAction } from './page-action.js'
import { PageLayout } from './page-layout.js'
import { PagedTable } from './paged-table.js'
import { SecretRevealDialog } from './secret-reveal-dialog.js'
import { SelectField } from './select-field.js'
import { StatusBadge } from './status-badge.js'
import { TextField } from './text-field.js'
import { TimeText } from './time-text.js'
import { useListNotice } from './use-list-notice.js'
import { usePagedList } from './use-paged-list.js'
import { useSubmit } from './use-submit.js'

const ROLE_TEXT: Record<Role, string> = {
  owner: 'Owner: everything, including other owners',
  admin: 'Admin: keys, apps, webhooks, employees and users',
  viewer: 'Viewer: can look, cannot change anything',
}

type Open =
  | { kind: 'invite' }
  | { kind: 'invited'; invited: InvitedUser }
  | { kind: 'remove'; user: ConsoleUser }

/** Who can use this console: invite (a one-time password, shown once) and remove; owners and admins only. */
export function UsersPage() {
  const { api, user: me } = useConsole()
  const list = usePagedList<ConsoleUser>('/users')
  const [open, setOpen] = useState<Open>()
  const { notice, changed } = useListNotice(list)
  const close = () => setOpen(undefined)

  const columns: Column<ConsoleUser>[] = [
    {
      heading: 'Email',
      cell: (u) => (
        <>
          {u.email} {u.id === me.id ? <span className="muted">(you)</span> : null}
        </>
      ),
    },
    {
      heading: 'Role',
      cell: (u) => (
        <>
          <StatusBadge status={u.role} label={u.role} />
          {u.mustChangePassword ? <span className="muted"> has not chosen a password yet</span> : null}
        </>
      ),
    },
    { heading: 'Last signed in', cell: (u) => <TimeText value={u.lastSignInAt} /> },
    { heading: 'Added', cell: (u) => <TimeText value={u.createdAt} /> },
  ]

  return (
    <PageLayout
      title="Users"
      actions={<PageAction label="Invite user" onClick={() => setOpen({ kind: 'invite' })} />}
      lead="People who can sign in to this console for your organisation."
    >
      <LastNotice notice={notice} />
      <PagedTable
        list={list}
        empty={<EmptyState title="No users" />}
        caption="Console users"
        columns={columns}
        rowKey={(u) => u.id}
        actions={(u) =>
          u.id !== me.id ? (
            <button
              type="button"
              className="button-danger"
              onClick={() => setOpen({ kind: 'remove', user: u })}
              aria-label={`Remove ${u.email}`}
            >
              Remove
            </button>
          ) : null
        }
      />

      {open?.kind === 'invite' ? (
        <InviteDialog
          canInviteOwner={me.role === 'owner'}
          onClose={close}
          onInvited={(invited) => {
            list.reload()
            setOpen({ kind: 'invited', invited })
          }}
        />
      ) : null}
      {open?.kind === 'invited' ? (
        <SecretRevealDialog
          title="User invited"
          intro={
            <p>
              <strong>{open.invited.user.email}</strong> can sign in at{' '}
              <code>{window.location.origin}/console</code> with this one-time password, and will then choose
              their own.
            </p>
          }
          secretLabel="One-time password"
          secret={open.invited.temporaryPassword}
          advice={
            <p>
              <strong>Copy it now: it will not be shown again.</strong> Give it to them privately (not in the
              same message as the address).
            </p>
          }
          onClose={close}
        />
      ) : null}
      {open?.kind === 'remove' ? (
        <ConfirmDialog
          title="Remove this user?"
          confirmLabel="Remove user"
          danger
          onClose={close}
          onConfirm={async () => {
            await api.delete(`/users/${open.user.id}`)
            changed(`${open.user.email} can no longer sign in.`)
          }}
        >
          <p>
            <strong>{open.user.email}</strong> is signed out everywhere and can no longer sign in. What they
            did stays in the audit log. To give them access again, invite them again.
          </p>
        </ConfirmDialog>
      ) : null}
    </PageLayout>
  )
}

interface InviteDialogProps {
  canInviteOwner: boolean
  onClose: () => void
  onInvited: (invited: InvitedUser) => void
}

function InviteDialog({ canInviteOwner, onClose, onInvited }: InviteDialogProps) {
  const { api } = useConsole()
  const [email, setEmail] = useState('')
  const [role, setRole] = useState<Role>('viewer')
  const roles = (Object.keys(ROLE_TEXT) as Role[]).filter((r) => r !== 'owner' || canInviteOwner)
  const submission = useSubmit(async () =>
    onInvited(await api.post<InvitedUser>('/users', { email: email.trim(), role })),
  )

  return (
    <FormDialog
      title="Invite a user"
      onClose={onClose}
      submission={submission}
      submitLabel="Invite"
      busyLabel="Inviting…"
    >
      <TextField label="Email" type="email" required value={email} onChange={setEmail} data-initial-focus />
      <SelectField
        label="Role"
        value={role}
        onChange={(value) => setRole(value as Role)}
        choices={roles.map((r) => ({ value: r, label: ROLE_TEXT[r] }))}
      />
    </FormDialog>
  )
}
