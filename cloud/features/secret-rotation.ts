import { formatServerTime } from '../../shared/time.js'
import { AppError } from '../app-error.js'

/** How long the secrets a rotation replaces keep working by default: a day to roll the new one out. */
export const DEFAULT_ROTATION_GRACE_SECONDS = 24 * 3600
/** At most 30 days: a secret rotated because it leaked must stop working soon. */
export const MAX_ROTATION_GRACE_SECONDS = 30 * 86_400

/** The store of an owner's rotating secrets: an OAuth app's client secrets, an endpoint's signing secrets. */
export interface RotatingSecretStore<R> {
  expireSecrets(tenantId: string, ownerId: string, untilMicros: number): Promise<void>
  insertSecret(tenantId: string, row: R): Promise<void>
}

/** When the secrets a rotation replaces stop working (µs); a grace outside 0 s to 30 days is refused. */
export function rotationGraceEnd(graceSeconds: number, nowMicros: number): number {
  if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > MAX_ROTATION_GRACE_SECONDS) {
    throw new AppError('validation_failed', 'grace: must be from 0 seconds to 30 days')
  }
  return nowMicros + graceSeconds * 1_000_000
}

/**
 * Rotates an owner's secrets in the caller's transaction: those in use keep working until
 * `untilMicros`, beside the new one, so its users switch without an outage
 * (docs/development/architecture.md#credentials). Answers the rotation's audit details.
 */
export async function replaceSecrets<R extends { id: string }>(
  store: RotatingSecretStore<R>,
  tenantId: string,
  ownerId: string,
  row: R,
  untilMicros: number,
): Promise<{ newSecretId: string; previousSecretsExpireAt: string }> {
  await store.expireSecrets(tenantId, ownerId, untilMicros)
  await store.insertSecret(tenantId, row)
  return { newSecretId: row.id, previousSecretsExpireAt: formatServerTime(untilMicros) }
}
