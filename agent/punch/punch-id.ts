import crypto from 'node:crypto'

/**
 * One-shot SHA-256 (node:crypto's `hash`, Node 20.12 and later): half the cost of a Hash object
 * per punch, which every punch of a busy terminal pays. createHash where it is missing.
 */
const sha256Hex: (text: string) => string =
  typeof (crypto as { hash?: unknown }).hash === 'function'
    ? (text) =>
        (crypto as unknown as { hash(a: string, d: string, e: 'hex'): string }).hash('sha256', text, 'hex')
    : (text) => crypto.createHash('sha256').update(text).digest('hex')

/**
 * The punch id (docs/decisions/0025-punch-id.md) is a hash of (deviceId, employeeCode, punchedAt, punchType),
 * so a device that sends its log again, or an agent that forwards a chunk twice after a crash, never
 * makes a duplicate: the cloud dedupes on it as externalId. The instant is used, not its spelling.
 */
export function punchId(
  deviceId: string,
  employeeCode: string,
  punchedAtMicros: number,
  punchType: string,
): string {
  const hash = sha256Hex(`${deviceId}\u0000${employeeCode}\u0000${punchedAtMicros}\u0000${punchType}`)
  return `hjp_${hash.slice(0, 32)}`
}
