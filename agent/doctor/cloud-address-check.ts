import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { type CheckOutcome, describeError, fail, pass } from './check-result.js'
import { stepSignal, untilAborted } from './step-timeout.js'

/** The host of cloud.url, an IPv6 address without its brackets (RFC 3986 §3.2.2). */
export function cloudHost(url: string): string {
  return new URL(url).hostname.replace(/^\[(.*)\]$/, '$1')
}

/** cloud.url's host resolves to an address, as the system's resolver (what the agent uses) says. */
export async function checkCloudAddress(
  url: string,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<CheckOutcome> {
  const host = cloudHost(url)
  if (isIP(host) !== 0) return pass(`${host} is an address (nothing to resolve)`)
  try {
    const addresses = await untilAborted(
      lookup(host, { all: true }),
      stepSignal(signal, timeoutMs),
      'DNS lookup',
    )
    return pass(`${host} resolves to ${addresses.map((a) => a.address).join(', ')}`)
  } catch (err) {
    return fail(
      `${host} does not resolve (${describeError(err)})`,
      "check cloud.url's spelling, this machine's DNS server (nslookup the host), or a proxy the site requires",
    )
  }
}
