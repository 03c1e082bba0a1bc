import { type FormEvent, useState } from 'react'
import { errorMessage } from './api-client.js'
import type { ConsoleUser, InvitedUser, Role } from './api-types.js'
import { ConfirmDialog } from './confirm-dialog.js'
import { useConsole } from './console-context.js'
import { Dialog } from './dialog.js'
import { EmptyState } from './empty-state.js'
import { Field } from './field.js'
import { ListLoading } from './list-loading.js'
import { LoadMoreButton } from './load-more-button.js'
import { Notice, type NoticeKind } from './notice.js'
import { ShownOnceSecret } from './shown-once-secret.js'
import { StatusBadge } from './status-badge.js'
import { TimeText } from './time-text.js'
import { usePagedList } from './use-paged-list.js'

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
  const { api, canWrite, user: me } = useConsole()
  const list = usePagedList<ConsoleUser>('/users')
  const [open, setOpen] = useState<Open>()
  const [notice, setNotice] = useState<{ kind: NoticeKind; text: string }>()
  const close = () => setOpen(undefined)

  return (
    <section>
      <div className="page-header">
        <h1 tabIndex={-1}>Users</h1>
        {canWrite ? (
          <button type="button" className="button-primary" onClick={() => setOpen({ kind: 'invite' })}>
            Invite user
          </button>
        ) : null}
      </div>
      <p className="lead">People who can sign in to this console for your organisation.</p>
      {notice ? <Notice kind={notice.kind}>{notice.text}</Notice> : null}
      {list.error ? <Notice kind="error">{list.error}</Notice> : null}
      <ListLoading list={list} />
      {list.loaded && list.items.length === 0 ? <EmptyState title="No users" /> : null}
      {list.items.length > 0 ? (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Console users</caption>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Last signed in</th>
                <th scope="col">Added</th>
                {canWrite ? (
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {list.items.map((u) => (
                <tr key={u.id}>
                  <td>
                    {u.email} {u.id === me.id ? <span className="muted">(you)</span> : null}
                  </td>
                  <td>
                    <StatusBadge status={u.role} label={u.role} />
                    {u.mustChangePassword ? (
                      <span className="muted"> has not chosen a password yet</span>
                    ) : null}
                  </td>
                  <td>
                    <TimeText value={u.lastSignInAt} />
                  </td>
                  <td>
                    <TimeText value={u.createdAt} />
                  </td>
                  {canWrite ? (
                    <td>
                      {u.id !== me.id ? (
                        <button
                          type="button"
                          className="button-danger"
                          onClick={() => setOpen({ kind: 'remove', user: u })}
                          aria-label={`Remove ${u.email}`}
                        >
                          Remove
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
        <Dialog title="User invited" onClose={close}>
          <p>
            <strong>{open.invited.user.email}</strong> can sign in at{' '}
            <code>{window.location.origin}/console</code> with this one-time password, and will then choose
            their own.
          </p>
          <ShownOnceSecret label="One-time password" value={open.invited.temporaryPassword}>
            <p>
              <strong>Copy it now: it will not be shown again.</strong> Give it to them privately (not in the
              same message as the address).
            </p>
          </ShownOnceSecret>
          <div className="dialog-actions">
            <button type="button" className="button-primary" onClick={close} data-initial-focus>
              Done
            </button>
          </div>
        </Dialog>
      ) : null}
      {open?.kind === 'remove' ? (
        <ConfirmDialog
          title="Remove this user?"
          confirmLabel="Remove user"
          danger
          onClose={close}
          onConfirm={async () => {
            await api.delete(`/users/${open.user.id}`)
            setNotice({ kind: 'success', text: `${open.user.email} can no longer sign in.` })
            list.reload()
          }}
        >
          <p>
            <strong>{open.user.email}</strong> is signed out everywhere and can no longer sign in. What they
            did stays in the audit log. To give them access again, invite them again.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
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
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string>()
  const roles = (Object.keys(ROLE_TEXT) as Role[]).filter((r) => r !== 'owner' || canInviteOwner)

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      onInvited(await api.post<InvitedUser>('/users', { email: email.trim(), role }))
    } catch (err) {
      setError(errorMessage(err))
      setBusy(false)
    }
  }

  return (
    <Dialog title="Invite a user" onClose={onClose}>
      <form onSubmit={submit}>
        {error ? <Notice kind="error">{error}</Notice> : null}
        <Field label="Email">
          <input
            type="email"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            data-initial-focus
          />
        </Field>
        <Field label="Role">
          <select value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {roles.map((r) => (
              <option key={r} value={r}>
                {ROLE_TEXT[r]}
              </option>
            ))}
          </select>
        </Field>
        <div className="dialog-actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button-primary" disabled={busy}>
            {busy ? 'Inviting…' : 'Invite'}
          </button>
        </div>
      </form>
    </Dialog>
  )
}
