import net from 'node:net'
import { ConfigError } from '../settings/config-error.js'

/** Whether something can listen on 127.0.0.1:`port` right now. */
async function portIsFree(port: number): Promise<boolean> {
  const server = net.createServer()
  const free = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => resolve(true))
  })
  if (free) await new Promise<void>((resolve) => server.close(() => resolve()))
  return free
}

/**
 * Checked before the agent starts, so that a taken port is reported as the setting to change rather
 * than as the agent's failure to start. The agent's own error still covers a port taken
 * between this check and its listen.
 */
export async function assertPortsFree(ports: readonly { port: number; variable: string }[]): Promise<void> {
  const problems: string[] = []
  for (const { port, variable } of ports) {
    if (!(await portIsFree(port))) problems.push(portTakenMessage(variable, port))
  }
  if (problems.length > 0) throw new ConfigError(problems)
}

export function portTakenMessage(variable: string, port: number): string {
  return `${variable}: 127.0.0.1:${port} is already in use by another program; stop it, or set ${variable} to a free port`
}
