import { MAX_FUTURE_SKEW_SECONDS } from '../../shared/punch.js'
import { type CheckOutcome, fail, pass, skip, warn } from './check-result.js'
import type { CloudDate } from './cloud-credentials-check.js'

/** Past this the clock is worth fixing, though nothing is refused yet. */
export const CLOCK_WARN_SECONDS = 5

/**
 * This machine's clock against the cloud's, read from the Date header of the token answer
 * (RFC 9110 §6.6.1: whole seconds, the time the answer was made). The cloud's time is taken as
 * the middle of that second, at the middle of the request, so the estimate is good to about half a
 * second plus half the round trip. Past MAX_FUTURE_SKEW_SECONDS (shared/punch.ts) the cloud
 * refuses punches dated this far ahead (punched_at_in_future), and the agent's clock sets ZK
 * terminals' clocks (setTime) and judges devices' clocks.
 */
export function checkClock(cloudDate: CloudDate | undefined): CheckOutcome {
  if (cloudDate === undefined) return skip('the cloud did not answer (see the cloud checks)')
  if (cloudDate.dateMs === undefined) return skip('the cloud sent no Date header to compare with')
  const localMs = (cloudDate.sentAtMs + cloudDate.receivedAtMs) / 2
  const skewSeconds = Math.round((localMs - (cloudDate.dateMs + 500)) / 1000)
  const magnitude = Math.abs(skewSeconds)
  const said =
    magnitude === 0
      ? 'agrees with the cloud (within a second)'
      : `is ${magnitude} s ${skewSeconds > 0 ? 'ahead of' : 'behind'} the cloud`
  const fix =
    'set this machine to sync its clock with NTP (Linux: timedatectl set-ntp true; Windows: Settings > Time > Sync now)'
  if (magnitude > MAX_FUTURE_SKEW_SECONDS) {
    return fail(
      `this machine's clock ${said}: more than the ${MAX_FUTURE_SKEW_SECONDS / 60} minutes the cloud allows`,
      `${fix}; punches dated more than ${MAX_FUTURE_SKEW_SECONDS / 60} minutes ahead of the cloud are refused`,
    )
  }
  if (magnitude > CLOCK_WARN_SECONDS) return warn(`this machine's clock ${said}`, fix)
  return pass(`this machine's clock ${said}`)
}
