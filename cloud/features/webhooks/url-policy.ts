import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import { isIP, type LookupFunction, Socket, type TcpNetConnectOpts } from 'node:net'
import type { Duplex } from 'node:stream'
import ipaddr from 'ipaddr.js'
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent'

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string }

const MAX_URL_LENGTH = 2048

/**
 * Addresses ipaddr.js (and so request-filtering-agent) calls unicast that no receiver has: the
 * deprecated IPv4-compatible IPv6 block (RFC 4291 §2.5.5.1), where `[::127.0.0.1]` or
 * `[::169.254.169.254]` passed as public (found by the security tests).
 */
const DENIED = ['::/96'].map((cidr) => ipaddr.parseCIDR(cidr))

const inDenied = (address: ipaddr.IPv4 | ipaddr.IPv6) =>
  DENIED.some(([base, bits]) => address.kind() === base.kind() && address.match(base, bits))

/** Whether an address is one a webhook may reach without the allowlist: public unicast only. */
function isPublicUnicast(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  return address.range() === 'unicast' && !inDenied(address)
}

/** The code of our own refusals (deniedError). */
const ADDRESS_REFUSED = 'ERR_WEBHOOK_ADDRESS_NOT_ALLOWED'

const deniedError = (address: string, host: string) =>
  Object.assign(
    new Error(
      `DNS lookup ${address}(host:${host}) is not allowed. Because, It is an IPv4-compatible IPv6 address.`,
    ),
    { code: ADDRESS_REFUSED },
  )

/**
 * Whether a connection was refused for its address: by deniedError, or by request-filtering-agent,
 * whose refusals carry no code, only this message (`DNS lookup <address>(family:…, host:…) is not
 * allowed. Because, …`), for an IP literal and a DNS answer alike.
 */
export function isAddressRefusal(err: { code?: unknown; message: string }): boolean {
  return err.code === ADDRESS_REFUSED || /^DNS lookup .+ is not allowed\./.test(err.message)
}

/**
 * A lookup that refuses the DENIED addresses, for request-filtering-agent to check the rest (its
 * own denyIPAddressList cannot hold an IPv6 network without warning on every IPv4 answer).
 */
function refusingLookup(lookup: LookupFunction = dnsLookup as LookupFunction): LookupFunction {
  return ((hostname: string, options: LookupOptions, callback: (...args: unknown[]) => void) => {
    lookup(hostname, options, ((err: Error | null, address: string | LookupAddress[], family?: number) => {
      if (err) return callback(err)
      const answers = Array.isArray(address) ? address : [{ address, family: family ?? 0 }]
      const bad = answers.find((a) => isIP(a.address) && inDenied(ipaddr.parse(a.address)))
      if (bad) return callback(deniedError(bad.address, hostname))
      callback(null, address, family)
    }) as never)
  }) as unknown as LookupFunction
}

type ConnectionListener = (error: Error | null, socket: Duplex) => void

/** The connection, unless its address (an IP literal, or a DNS answer) is DENIED. */
function strictConnection(
  options: TcpNetConnectOpts,
  listener: ConnectionListener | undefined,
  connect: (options: TcpNetConnectOpts, listener?: ConnectionListener) => Duplex,
): Duplex {
  const host = options.host ?? ''
  if (isIP(host) && inDenied(ipaddr.parse(host))) {
    const socket = new Socket()
    const error = deniedError(host, host)
    if (listener) listener(error, socket)
    else socket.destroy(error)
    return socket
  }
  return connect({ ...options, lookup: refusingLookup(options.lookup) }, listener)
}

class StrictHttpAgent extends RequestFilteringHttpAgent {
  override createConnection(options: TcpNetConnectOpts, listener?: ConnectionListener) {
    return strictConnection(options, listener, (o, l) => super.createConnection(o, l))
  }
}

class StrictHttpsAgent extends RequestFilteringHttpsAgent {
  override createConnection(options: TcpNetConnectOpts, listener?: ConnectionListener) {
    return strictConnection(options, listener, (o, l) => super.createConnection(o, l))
  }
}

/**
 * Where webhooks may go (docs/decisions/0022-webhook-ssrf-guard.md): https on the public internet. The
 * decisive check is made when connecting, by request-filtering-agent, on the address DNS actually returned,
 * so an IP literal, a name resolving to loopback and DNS rebinding are all refused: no loopback, private,
 * link-local (169.254.169.254, cloud metadata) or other non-unicast address. The allowlist
 * (HAJRI_WEBHOOK_ALLOWLIST: host names, IPs and CIDRs) opens chosen hosts, with plain http, for
 * development and tests.
 */
export class WebhookUrlPolicy {
  private readonly hosts: Set<string>
  private readonly networks: string[]
  private readonly filtering: { http: RequestFilteringHttpAgent; https: RequestFilteringHttpsAgent }
  private readonly open: { http: HttpAgent; https: HttpsAgent }

  constructor(allowlist: readonly string[]) {
    this.hosts = new Set(allowlist.filter((entry) => !isNetwork(entry)).map((h) => h.toLowerCase()))
    this.networks = allowlist.filter(isNetwork)
    const options = { keepAlive: true, allowIPAddressList: this.networks }
    this.filtering = { http: new StrictHttpAgent(options), https: new StrictHttpsAgent(options) }
    this.open = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) }
  }

  /** Whether a URL may be registered; the reason, for the admin, if not. */
  check(text: string): UrlCheck {
    if (text.length > MAX_URL_LENGTH)
      return { ok: false, reason: `must be at most ${MAX_URL_LENGTH} characters` }
    let url: URL
    try {
      url = new URL(text)
    } catch {
      return { ok: false, reason: 'is not a URL' }
    }
    if (url.username || url.password) return { ok: false, reason: 'must not carry a user name or password' }
    const allowed = this.isAllowlisted(url.hostname)
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowed)) {
      return { ok: false, reason: 'must be an https:// URL' }
    }
    const literal = url.hostname.replace(/^\[(.*)\]$/, '$1')
    if (!allowed && isIP(literal) && !isPublicUnicast(ipaddr.parse(literal))) {
      return { ok: false, reason: 'must not point at a loopback, private, link-local or reserved address' }
    }
    return { ok: true, url }
  }

  /** The agents a delivery to this URL connects through: filtering, unless the host is allowlisted. */
  agentsFor(url: URL): { http: HttpAgent; https: HttpsAgent } {
    return this.hosts.has(url.hostname.toLowerCase()) ? this.open : this.filtering
  }

  close(): void {
    for (const agent of [this.filtering.http, this.filtering.https, this.open.http, this.open.https])
      agent.destroy()
  }

  private isAllowlisted(hostname: string): boolean {
    if (this.hosts.has(hostname.toLowerCase())) return true
    const literal = hostname.replace(/^\[(.*)\]$/, '$1')
    if (!isIP(literal)) return false
    const address = ipaddr.parse(literal)
    return this.networks.some((network) => {
      const [base, bits] = network.includes('/')
        ? ipaddr.parseCIDR(network)
        : [ipaddr.parse(network), undefined]
      if (address.kind() !== base.kind()) return false
      return bits === undefined ? address.toString() === base.toString() : address.match(base, bits)
    })
  }
}

function isNetwork(entry: string): boolean {
  if (isIP(entry)) return true
  if (!entry.includes('/')) return false
  try {
    ipaddr.parseCIDR(entry)
    return true
  } catch {
    return false
  }
}
