import { randomBytes } from 'node:crypto'
import type { PunchInput } from '../../shared/punch.js'
import { formatTimestamp } from '../../shared/time.js'

const IST_MINUTES = 330

/**
 * Valid punches, each new: every one has its own externalId and instant, cycles over the given
 * (ACTIVE) employees, and falls inside the backfill window, so the endpoint stores every one
 * rather than answering from its dedupe or error paths.
 */
export function createPunchGenerator(employeeCodes: readonly string[]): () => PunchInput {
  if (employeeCodes.length === 0) throw new Error('no employees to punch for')
  // A tag per generator, so two runs against one database could never collide on externalId.
  const tag = randomBytes(4).toString('hex')
  // Six hours ago, one millisecond apart: hours of load before reaching the server's "now".
  const start = (Date.now() - 6 * 3_600_000) * 1000
  let n = 0
  return () => {
    const i = n++
    const round = Math.floor(i / employeeCodes.length)
    return {
      employeeCode: employeeCodes[i % employeeCodes.length] as string,
      punchType: round % 2 === 0 ? 'IN' : 'OUT',
      // An agent sends device time with its offset (docs/decisions/0010-rfc-3339-times.md), as here.
      punchedAt: formatTimestamp(start + i * 1000, IST_MINUTES),
      deviceId: 'gate-1',
      source: 'hajri-bench',
      externalId: `bench-${tag}-${i}`,
    }
  }
}
