import { isScope, type Scope } from '../../../shared/scopes.js'
import { AppError } from '../../app-error.js'

export const DEFAULT_RATE_LIMIT_PER_MINUTE = 600
export const MAX_RATE_LIMIT_PER_MINUTE = 100_000

export interface CredentialSettingsInput {
  name: string
  scopes: readonly string[]
  rateLimitPerMinute?: number
}

export interface CredentialSettings {
  name: string
  scopes: Scope[]
  rateLimitPerMinute: number
}

/**
 * What API keys and OAuth apps have in common: a name, scopes, a per-minute limit. Collects every
 * problem, plus those of `extra`, into one validation_failed.
 */
export function checkCredentialSettings(
  input: CredentialSettingsInput,
  extra: string[] = [],
): CredentialSettings {
  const name = input.name.trim()
  const rateLimitPerMinute = input.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE
  const scopes = [...new Set(input.scopes)]
  const errors = [...extra]
  if (name.length < 1 || name.length > 100) errors.push('name: must be 1 to 100 characters')
  if (scopes.length === 0) errors.push('scopes: at least one is required')
  for (const scope of scopes) if (!isScope(scope)) errors.push(`scopes: "${scope}" is not a scope`)
  if (
    !Number.isInteger(rateLimitPerMinute) ||
    rateLimitPerMinute < 1 ||
    rateLimitPerMinute > MAX_RATE_LIMIT_PER_MINUTE
  ) {
    errors.push(
      `rate limit: must be a whole number of requests per minute from 1 to ${MAX_RATE_LIMIT_PER_MINUTE}`,
    )
  }
  if (errors.length > 0) throw new AppError('validation_failed', errors.join('; '))
  return { name, scopes: scopes as Scope[], rateLimitPerMinute }
}

export function parseScopes(stored: string): Scope[] {
  return stored.split(' ').filter(isScope)
}
