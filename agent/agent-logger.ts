import pino, { type Logger } from 'pino'
import pretty from 'pino-pretty'

// Secrets never reach the logs, whatever object carries them (docs/decisions/0018-no-secrets-in-logs.md).
const REDACT = [
  'clientSecret',
  'password',
  'authorization',
  'access_token',
  '*.clientSecret',
  '*.password',
  '*.authorization',
  '*.Authorization',
  '*.access_token',
  '*.headers.authorization',
  '*.headers.Authorization',
  'config.cloud.clientSecret',
  'config.mqtt.embedded.users[*].password',
  'config.mqtt.external.password',
]

/** The agent's logger: JSON lines for journald and log shippers, readable lines on a terminal. */
export function createAgentLogger(options: { level: string; pretty: boolean }): Logger {
  const base = {
    level: options.level,
    redact: { paths: REDACT, censor: '[redacted]' },
    base: { app: 'hajri-agent' },
  }
  return options.pretty
    ? pino(base, pretty({ colorize: true, sync: true, ignore: 'pid,hostname,app' }))
    : pino(base)
}
