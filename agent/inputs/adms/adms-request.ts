import type { AgentEvents } from '../../events.js'

/**
 * Where an ADMS request goes. Terminals put the pages under `/iclock/`; eSSL's push firmware adds
 * `.aspx` (`/iclock/cdata.aspx`, `/iclock/getrequest.aspx`), written for the vendor's IIS server;
 * some firmware spells the serial number parameter `sn`. All of these are the same request.
 */
export type AdmsPage =
  /** Handshake (GET) and uploads (POST). */
  | 'cdata'
  /** Command poll. */
  | 'getrequest'
  /** Command results. */
  | 'devicecmd'
  /** Heartbeat during long uploads (push 2.4). */
  | 'ping'
  /** Security PUSH 3.x (access-control firmware): not spoken here. */
  | 'registry'
  | 'push'

const PAGES: ReadonlySet<string> = new Set(['cdata', 'getrequest', 'devicecmd', 'ping', 'registry', 'push'])
const PATH = /^\/iclock\/([A-Za-z]{1,16})(?:\.aspx|\.php)?\/?$/i
/** What a terminal's serial number is made of (ZKTeco: letters and digits, 13 to 16 of them). */
const SERIAL_NUMBER = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/

export interface AdmsTarget {
  page: AdmsPage
  query: URLSearchParams
  /** Undefined when missing or not a serial number. */
  serialNumber: string | undefined
}

/** The page and query of a request target (`/iclock/cdata?SN=..&table=ATTLOG`); undefined: not ADMS. */
export function parseAdmsTarget(target: string): AdmsTarget | undefined {
  const at = target.indexOf('?')
  const path = at < 0 ? target : target.slice(0, at)
  const m = PATH.exec(path)
  const page = m?.[1]?.toLowerCase()
  if (page === undefined || !PAGES.has(page)) return undefined
  const query = new URLSearchParams(at < 0 ? '' : target.slice(at + 1))
  const serialNumber = query.get('SN') ?? query.get('sn') ?? undefined
  return {
    page: page as AdmsPage,
    query,
    serialNumber: serialNumber !== undefined && SERIAL_NUMBER.test(serialNumber) ? serialNumber : undefined,
  }
}

/** An upload's `Stamp` (the terminal's cursor after this batch): opaque, kept only if it looks like one. */
export function stampOf(query: URLSearchParams): string | undefined {
  const stamp = query.get('Stamp') ?? query.get('stamp') ?? undefined
  return stamp !== undefined && /^[A-Za-z0-9]{1,32}$/.test(stamp) ? stamp : undefined
}

export type AdmsRoute = AgentEvents['admsRequest']['route']

/** What a request is, by page and method; `other` for a method a page does not take. */
export function routeOf(page: AdmsPage, method: string): AdmsRoute {
  switch (page) {
    case 'cdata':
      return method === 'GET' ? 'handshake' : method === 'POST' ? 'upload' : 'other'
    case 'getrequest':
      return method === 'GET' || method === 'POST' ? 'poll' : 'other'
    case 'devicecmd':
      return method === 'POST' ? 'result' : 'other'
    case 'ping':
      return method === 'GET' || method === 'POST' ? 'ping' : 'other'
    default:
      return 'other'
  }
}

/** Lines of a body that hold something: what a terminal counts as records. */
export function countLines(body: Buffer, max: number): number {
  let lines = 0
  let start = 0
  while (start < body.length) {
    let end = body.indexOf(10, start)
    if (end < 0) end = body.length
    for (let i = start; i < end; i++) {
      const byte = body[i]
      if (byte !== 32 && byte !== 9 && byte !== 13) {
        lines++
        break
      }
    }
    if (lines > max) return lines
    start = end + 1
  }
  return lines
}

/** `::ffff:192.168.1.20` (a dual-stack listener's view of an IPv4 peer) is 192.168.1.20 to people. */
export const displayAddress = (address: string | undefined) =>
  (address ?? '').replace(/^::ffff:(?=\d+\.)/, '')
