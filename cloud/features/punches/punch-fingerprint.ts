import { createHash } from 'node:crypto'
import type { PunchInput } from '../../../shared/punch.js'

/**
 * What makes two punch submissions "the same punch" for externalId dedupe: the employee, type,
 * instant (not its spelling: +05:30 and Z forms of one instant match), device and source.
 */
export function punchFingerprint(input: PunchInput, punchedAt: number | null): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        input.employeeCode,
        input.punchType,
        punchedAt,
        input.deviceId ?? null,
        input.source ?? null,
      ]),
    )
    .digest('base64url')
    .slice(0, 22)
}
