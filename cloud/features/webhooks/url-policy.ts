import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent'

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string }

const MAX_URL_LENGTH = 2048

/**
 * Where webhooks may go (issue 5, DESIGN.md §4): https on the public internet. The decisive check
 * is made when connecting, by request-filtering-agent, on the address DNS actually returned, so an
 * IP literal, a name resolving to loopback and DNS rebinding are all refused: no loopback, private,
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
    this.filtering = {
      http: new RequestFilteringHttpAgent(options),
      https: new RequestFilteringHttpsAgent(options),
    }
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
    if (!allowed && isIP(literal) && ipaddr.parse(literal).range() !== 'unicast') {
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
