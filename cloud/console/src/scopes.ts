import type { Scope } from './api-types.js'

/** What each scope lets a key or app do (docs/decisions/0004-bearer-credentials-and-scopes.md). */
export const SCOPE_TEXT: Record<Scope, string> = {
  'employees:read': 'Read the employee directory',
  'attendance:read': 'Read punches',
  'attendance:write': 'Send punches (site agents, devices)',
  'attendance:admin': 'Configure attendance, correct punches, recompute and lock days',
}

export const SCOPES = Object.keys(SCOPE_TEXT) as Scope[]
