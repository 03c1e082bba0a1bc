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
export const SERIAL_NUMBER = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/

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
