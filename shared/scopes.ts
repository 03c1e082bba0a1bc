import { StringEnum } from './schema-helpers.js'

/** DESIGN.md §2: every public route requires exactly one of these. */
export const SCOPES = ['employees:read', 'attendance:read', 'attendance:write'] as const

export type Scope = (typeof SCOPES)[number]

export const ScopeSchema = StringEnum(SCOPES)

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value)
}
