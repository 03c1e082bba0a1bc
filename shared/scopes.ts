import { StringEnum } from './schema-helpers.js'

/**
 * Every public route requires exactly one of these
 * (docs/decisions/0004-bearer-credentials-and-scopes.md).
 */
export const SCOPES = ['employees:read', 'attendance:read', 'attendance:write', 'attendance:admin'] as const

export type Scope = (typeof SCOPES)[number]

export const ScopeSchema = StringEnum(SCOPES)

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value)
}
