/**
 * A handshake (`GET /iclock/cdata?options=all`) that did not succeed: a status other than 200 (a
 * 403 for a serial number the server does not know), or no reply at all (`status` undefined).
 */
export class AdmsHandshakeError extends Error {
  readonly code = 'adms_handshake_failed'

  constructor(
    readonly serialNumber: string,
    readonly status: number | undefined,
    readonly body: string,
    /** Why there was no reply (ECONNREFUSED, a timeout), when there was none. */
    readonly reason: string | undefined,
  ) {
    super(
      status === undefined
        ? `the handshake of ${serialNumber} got no reply: ${reason}`
        : `the handshake of ${serialNumber} was answered HTTP ${status}${firstLine(body)}`,
    )
    this.name = 'AdmsHandshakeError'
  }
}

/** A record that will never be acknowledged: the device was stopped, or CLEAR LOG erased it. */
export class AdmsRecordNotAcknowledgedError extends Error {
  readonly code = 'adms_record_not_acknowledged'

  constructor(message: string) {
    super(message)
    this.name = 'AdmsRecordNotAcknowledgedError'
  }
}

/** `: <the body's first line>`, short, for messages; empty for an empty body. */
export function firstLine(body: string): string {
  const line = body.trim().split(/\r?\n/)[0]?.trim() ?? ''
  if (line === '') return ''
  return `: ${line.length > 120 ? `${line.slice(0, 120)}...` : line}`
}
