/** One of the agent's JSON log lines, as the demo needs it. */
interface AgentLogLine {
  /** pino's: 30 info, 40 warn, 50 error, 60 fatal. */
  level: number
  msg: string
  /** The line in a few words, for the demo's output. */
  text: string
  err?: { code?: string; port?: number } | undefined
}

const WARN = 40

/** Logged when the agent is listening and forwarding (agent/commands/run-command.ts). */
export const AGENT_RUNNING = 'hajri-agent running'

/**
 * Warnings the demo's own setup causes on purpose, so not worth a line: its broker has no users
 * because it listens on loopback only (demo-agent.ts).
 */
const EXPECTED = new Set(['no mqtt.embedded.users: any client may connect and publish punches'])

/** A JSON log line of the agent, or undefined for anything else (a stack trace on stderr). */
export function parseAgentLogLine(line: string): AgentLogLine | undefined {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  const record = value as Record<string, unknown>
  if (typeof record.level !== 'number' || typeof record.msg !== 'string') return undefined
  const err =
    typeof record.err === 'object' && record.err !== null ? (record.err as Record<string, unknown>) : {}
  const details = [
    typeof err.message === 'string' ? err.message : undefined,
    typeof record.error === 'string' ? record.error : undefined,
    typeof record.deviceId === 'string' ? `device ${record.deviceId}` : undefined,
  ].filter((d) => d !== undefined)
  return {
    level: record.level,
    msg: record.msg,
    text: details.length > 0 ? `${record.msg}: ${details.join('; ')}` : record.msg,
    err:
      record.err === undefined
        ? undefined
        : {
            code: typeof err.code === 'string' ? err.code : undefined,
            port: typeof err.port === 'number' ? err.port : undefined,
          },
  }
}

/** Whether the demo shows this line: warnings and errors, less those its own setup causes. */
export function isWorthShowing(line: AgentLogLine): boolean {
  return line.level >= WARN && !EXPECTED.has(line.msg)
}
