import { createHash } from 'node:crypto'

/**
 * DESIGN.md §5: the punch id is a hash of (deviceId, employeeCode, punchedAt, punchType), so a
 * device that sends its log again, or an agent that forwards a chunk twice after a crash, never
 * makes a duplicate: the cloud dedupes on it as externalId. The instant is used, not its spelling.
 */
export function punchId(
  deviceId: string,
  employeeCode: string,
  punchedAtMicros: number,
  punchType: string,
): string {
  const hash = createHash('sha256')
    .update(`${deviceId}\u0000${employeeCode}\u0000${punchedAtMicros}\u0000${punchType}`)
    .digest('hex')
  return `hjp_${hash.slice(0, 32)}`
}
