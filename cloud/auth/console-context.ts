import type { ConsoleRole } from '../../shared/console-auth.js'
import type { Actor } from './actor.js'
import type { TenantContext } from './tenant-context.js'

/**
 * Who is calling the console API (/api/console/v1): set on the request by the console-auth
 * plugin. Either an admin token from the CLI, for scripts, or a console user signed in with
 * a session cookie; both fill the same shape, so routes and services need not know which
 * (docs/decisions/0047-admin-tokens-and-sessions.md).
 */
export interface ConsoleContext {
  tenant: TenantContext
  role: ConsoleRole
  /** For the audit log: `admin_token:<id>` or `console_user:<id>`, with the caller's address. */
  actor: Actor
  /** What the per-minute limit counts: the token, or the user (all of their sessions together). */
  rateLimitKey: string
  /** The signed-in console user; undefined for an admin token. */
  user?: { id: string; email: string; mustChangePassword: boolean }
}
