import type { LoggerOptions } from 'pino'

// Secrets never reach the logs, whatever a request or an error carries
// (docs/development/architecture.md, "Logging").
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  '*.headers.authorization',
  '*.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.adminPassword',
  '*.currentPassword',
  '*.newPassword',
  '*.temporaryPassword',
  '*.csrfToken',
  '*.key',
  '*.clientSecret',
  '*.client_secret',
  '*.access_token',
  '*.token',
  '*.secret',
]

// Query parameters whose values are never logged, should a client put a credential in a URL
// (RFC 6750 §2.3 allows access_token there; we do not accept it, but must not log it either).
const SECRET_PARAMETER =
  /([?&](?:access_token|token|client_secret|secret|api_key|apikey|key|password)=)[^&#]*/gi

/** A request as the logs show it: method, URL with secret parameters censored, addresses. */
function requestForLog(request: {
  method?: string
  url?: string
  host?: string
  ip?: string
  socket?: { remotePort?: number }
}) {
  return {
    method: request.method,
    url: request.url?.replace(SECRET_PARAMETER, '$1[redacted]'),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  }
}

/** pino options for every Hajri cloud process: level, secrets redacted. */
export function loggerOptions(level: string): LoggerOptions {
  return { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, serializers: { req: requestForLog } }
}
