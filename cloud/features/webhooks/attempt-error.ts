import { isAddressRefusal } from './url-policy.js'

/** Why an attempt got no answer: what its log keeps for the tenant's admins, and the whole error. */
export interface AttemptError {
  /** Fixed text: an error code and a phrase, never a host name or address from the network. */
  recorded: string
  /** The error as raised, for the operator's log only. */
  detail: string
}

/** The address refusal, as the attempt log has it: the same whatever the host resolved to. */
export const ADDRESS_NOT_ALLOWED = 'the address is not allowed'

const PHRASES: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  EPIPE: 'the connection was closed while sending',
  ENOTFOUND: 'the host name was not found',
  EAI_AGAIN: 'the host name could not be looked up',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
}

/**
 * The attempt log's reason for an error that left no answer. A tenant's admins read the log, and the
 * error's message may hold what only the operator should see: the address a name resolved to, and
 * whether an internal name exists (a refused `payroll-db.corp.internal` said `DNS lookup 10.66.77.88
 * (host: payroll-db.corp.internal) is not allowed`). So the log keeps a fixed phrase by error code;
 * the message goes to the operator's log (the dispatcher logs `detail`).
 */
export function attemptError(err: Error & { code?: string; event?: string }): AttemptError {
  const detail = `${err.code ?? 'ERROR'}: ${err.message}`
  if (isAddressRefusal(err)) return { recorded: ADDRESS_NOT_ALLOWED, detail }
  const code = typeof err.code === 'string' && /^[A-Z][A-Z0-9_]{0,40}$/.test(err.code) ? err.code : 'ERROR'
  let phrase = PHRASES[code]
  if (code === 'ETIMEDOUT') {
    // got's TimeoutError names the phase that ran out (lookup, connect, secureConnect, request).
    phrase =
      err.event === 'request' || err.event === undefined
        ? 'no answer within the timeout'
        : 'no connection within the connect timeout'
  } else if (phrase === undefined && /CERT|TLS|SSL/.test(code)) {
    phrase = 'the TLS handshake failed'
  }
  return { recorded: `${code}: ${phrase ?? 'the request failed'}`, detail }
}
