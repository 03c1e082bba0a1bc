import type { AuditAction, AuditEntry } from './api-types.js'
import { type Column, DataTable } from './data-table.js'
import { TimeText } from './time-text.js'

// Typed by the server's list: an action added there does not compile here until it has a name.
const ACTION_TEXT: Record<AuditAction, string> = {
  'api_key.created': 'API key created',
  'api_key.revoked': 'API key revoked',
  'oauth_app.created': 'OAuth app created',
  'oauth_app.secret_rotated': 'OAuth app secret rotated',
  'oauth_app.revoked': 'OAuth app revoked',
  'oauth_token.issued': 'Access token issued',
  'oauth_token.revoked': 'Access token revoked',
  'webhook_endpoint.created': 'Webhook endpoint added',
  'webhook_endpoint.updated': 'Webhook endpoint changed',
  'webhook_endpoint.paused': 'Webhook endpoint paused',
  'webhook_endpoint.resumed': 'Webhook endpoint resumed',
  'webhook_endpoint.deleted': 'Webhook endpoint deleted',
  'webhook_endpoint.disabled': 'Webhook endpoint disabled',
  'webhook_endpoint.secret_rotated': 'Webhook secret rotated',
  'webhook_endpoint.secret_revealed': 'Webhook secret shown',
  'webhook_endpoint.test_sent': 'Test event sent',
  'webhook_delivery.retried': 'Delivery retried',
  'webhook_delivery.replayed': 'Failed deliveries replayed',
  'admin_token.created': 'Admin token created',
  'admin_token.revoked': 'Admin token revoked',
  'console_user.invited': 'User invited',
  'console_user.removed': 'User removed',
  'console_user.signed_in': 'Signed in',
  'console_user.sign_in_failed': 'Sign-in failed',
  'console_user.signed_out': 'Signed out',
  'console_user.password_changed': 'Password changed',
  'console_user.password_reset': 'Password reset',
  'punch.manual_added': 'Manual punch added',
  'punch.voided': 'Punch voided',
  'attendance.config_changed': 'Attendance settings changed',
  'attendance.recompute_started': 'Attendance recompute started',
  'attendance.period_locked': 'Attendance period locked',
}

/** Every action the console knows a name for, for the audit filter. */
export const KNOWN_ACTIONS = Object.keys(ACTION_TEXT) as AuditAction[]

/** "api_key.revoked" → "API key revoked"; an action added later reads as its own words. */
export function actionText(action: string): string {
  return ACTION_TEXT[action as AuditAction] ?? action.replace(/[._]/g, ' ')
}

/** "console_user:usr_…" → the user's email when it is known. */
function actorText(actor: string, emails: ReadonlyMap<string, string>): string {
  const [kind, id] = actor.split(':', 2)
  if (id && kind === 'console_user' && emails.has(id)) return emails.get(id) as string
  if (actor === 'anonymous') return 'Someone not signed in'
  return actor
}

interface AuditTableProps {
  entries: AuditEntry[]
  emails?: ReadonlyMap<string, string>
  caption: string
}

/** Audit entries, newest first: when, who, what, on what, from where, and the details. */
export function AuditTable({ entries, emails = new Map(), caption }: AuditTableProps) {
  const columns: Column<AuditEntry>[] = [
    { heading: 'When', cell: (entry) => <TimeText value={entry.occurredAt} /> },
    { heading: 'Who', cell: (entry) => actorText(entry.actor, emails) },
    {
      heading: 'What',
      cell: (entry) => (
        <>
          {actionText(entry.action)} <code className="muted">{entry.action}</code>
        </>
      ),
    },
    {
      heading: 'On',
      cell: (entry) => (
        <>
          {entry.target.type} <code>{entry.target.id}</code>
        </>
      ),
    },
    { heading: 'From', cell: (entry) => entry.ip ?? <span className="muted">Command line</span> },
    {
      heading: 'Details',
      cell: (entry) =>
        Object.keys(entry.details).length === 0 ? (
          <span className="muted">None</span>
        ) : (
          <details>
            <summary>Show</summary>
            <pre className="code-block">{JSON.stringify(entry.details, null, 2)}</pre>
          </details>
        ),
    },
  ]
  return <DataTable caption={caption} columns={columns} rows={entries} rowKey={(entry) => entry.id} />
}
