import { isIP, isIPv6 } from 'node:net'

interface ListenAddress {
  /** A host name or address; an IPv6 address without its brackets. */
  host: string
  port: number
}

const HOST_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*\.?$/

/**
 * Reads `status.listen`: `127.0.0.1:9410`, `localhost:9410` or `[::1]:9410` (IPv6 in brackets,
 * RFC 3986 §3.2.2). The port is 1 to 65535: listeners are found by their port (the CLI finds the
 * status listener, terminals the ADMS one), so 0 (any free port) is not allowed in a configuration;
 * `anyPort` allows it for listeners that tests start.
 */
export function parseListenAddress(
  text: string,
  options: { anyPort?: boolean } = {},
): ListenAddress | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text)
  if (!m) return undefined
  const port = Number(m[3])
  if (port < (options.anyPort ? 0 : 1) || port > 65_535) return undefined
  if (m[1] !== undefined) return isIPv6(m[1]) ? { host: m[1], port } : undefined
  const host = m[2] ?? ''
  return isIP(host) !== 0 || HOST_NAME.test(host) ? { host, port } : undefined
}
