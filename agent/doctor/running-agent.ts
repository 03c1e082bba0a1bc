import { parseListenAddress } from '../config/listen-address.js'
import type { AgentStatus } from '../status/agent-status.js'
import { describeError } from './check-result.js'
import { stepSignal } from './step-timeout.js'

/** Whether an agent answers on status.listen, and what it says (GET /status, agent/status/). */
export type RunningAgent =
  | { running: true; url: string; status: AgentStatus }
  | { running: false; url: string; reason: string }

/** The URL a tool on this machine reaches a listener on: a wildcard host is reached on loopback. */
export function statusUrl(listen: string): string {
  const address = parseListenAddress(listen)
  if (!address) return `http://${listen}`
  const host = address.host === '0.0.0.0' ? '127.0.0.1' : address.host === '::' ? '::1' : address.host
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`
}

/** Asks the status listener for the agent's status; any failure means it is not running there. */
export async function findRunningAgent(
  listen: string,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<RunningAgent> {
  const url = statusUrl(listen)
  try {
    const response = await fetch(`${url}/status`, { signal: stepSignal(signal, timeoutMs) })
    if (!response.ok) return { running: false, url, reason: `${url}/status answered ${response.status}` }
    const status = (await response.json()) as AgentStatus
    if (typeof status?.agent?.site !== 'string' || !Array.isArray(status.devices)) {
      return { running: false, url, reason: `${url}/status is not an agent's status` }
    }
    return { running: true, url, status }
  } catch (err) {
    return { running: false, url, reason: `nothing answers at ${url} (${describeError(err)})` }
  }
}
