import { parseArgs } from 'node:util'
import type { DeviceClockResult, DeviceCommandStatus } from '../inputs/device-report.js'
import { type AgentCommand, type AgentIo, AgentUsageError } from './agent-command.js'
import { agentControl, CONTROL_OPTIONS } from './agent-control.js'

/**
 * `hajri-agent devices backfill DEVICE --from T --to T [--config agent.yaml | --token-file F]
 * [--url URL] [--json]`: asks a push terminal,
 * through the running agent, to upload its records of that period again (`DATA QUERY ATTLOG`). The
 * agent queues the command durably; the terminal takes it at its next poll and sends the records as
 * ordinary uploads, which are stored like any other (a record the cloud has already is a duplicate
 * it drops). Nothing on the terminal is changed. A change, so it needs the agent's control token
 * (agent-control.ts). Exit 0 once queued, 1 when the agent cannot be reached or refuses, 2 on
 * wrong usage.
 */
export const devicesBackfillCommand: AgentCommand = async (args, io) => {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      from: { type: 'string' },
      to: { type: 'string' },
      json: { type: 'boolean' },
      ...CONTROL_OPTIONS,
    },
    allowPositionals: true,
  })
  const device = oneDevice('backfill', positionals)
  if (values.from === undefined || values.to === undefined) {
    throw new AgentUsageError(
      'devices backfill needs --from and --to (e.g. --from 2026-11-01 --to 2026-11-20)',
    )
  }
  const answer = await postToAgent(values, io, `/devices/${encodeURIComponent(device)}/backfill`, {
    from: values.from,
    to: values.to,
  })
  if (!answer.ok) return 1
  const body = answer.body as { command?: DeviceCommandStatus }
  if (!body.command) {
    io.stderr(`hajri-agent: the agent answered without the command\n`)
    return 1
  }
  const command = body.command
  if (values.json) io.stdout(`${JSON.stringify(command, null, 2)}\n`)
  else {
    io.stdout(
      `queued command ${command.id} for ${device}: ${command.text.replace('\t', ' ')}\n` +
        'The terminal takes it at its next poll and uploads those records again; `hajri-agent status` ' +
        'shows when it has answered.\n',
    )
  }
  return 0
}

/**
 * POSTs a device command to the running agent; on failure says why on stderr. Device commands
 * wait for the device (a clear-log reads its whole log first), hence the long timeout.
 */
async function postToAgent(
  values: { url?: string; config?: string; 'token-file'?: string },
  io: AgentIo,
  path: string,
  payload: object,
): Promise<{ ok: true; body: unknown } | { ok: false }> {
  const control = await agentControl(values, io)
  let response: Response
  try {
    response = await fetch(`${control.url}${path}`, {
      method: 'POST',
      headers: control.headers,
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(300_000),
    })
  } catch (err) {
    io.stderr(`hajri-agent: no agent answers at ${control.url} (${(err as Error).message}); is it running?\n`)
    return { ok: false }
  }
  const body = (await response.json().catch(() => ({}))) as { message?: string }
  if (response.status === 401) {
    io.stderr(`hajri-agent: ${control.refusal}\n`)
    return { ok: false }
  }
  if (!response.ok) {
    io.stderr(`hajri-agent: ${body.message ?? `the agent answered ${response.status}`}\n`)
    return { ok: false }
  }
  return { ok: true, body }
}

function oneDevice(command: string, positionals: readonly string[]): string {
  const [device, ...extra] = positionals
  if (device === undefined) throw new AgentUsageError(`devices ${command} needs the device id`)
  if (extra.length > 0)
    throw new AgentUsageError(`devices ${command} takes one device (got "${extra[0]}" too)`)
  return device
}

/**
 * `hajri-agent devices set-time DEVICE [--config agent.yaml | --token-file F] [--url URL]
 * [--json]`: sets a ZK terminal's clock from the agent's (keep the agent's machine NTP-synced),
 * through the agent's open session with it. Exit 0 once set, 1 when the agent or the terminal
 * cannot do it, 2 on wrong usage.
 */
export const devicesSetTimeCommand: AgentCommand = async (args, io) => {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: { json: { type: 'boolean' }, ...CONTROL_OPTIONS },
    allowPositionals: true,
  })
  const device = oneDevice('set-time', positionals)
  const answer = await postToAgent(values, io, `/devices/${encodeURIComponent(device)}/set-time`, {})
  if (!answer.ok) return 1
  const result = answer.body as DeviceClockResult
  if (values.json) io.stdout(`${JSON.stringify(result, null, 2)}\n`)
  else {
    io.stdout(
      `${device}: clock set; it reads ${result.deviceTime.replace('T', ' ')}, ${result.skewSeconds} s from the agent's\n`,
    )
  }
  return 0
}

/**
 * `hajri-agent devices clear-log DEVICE [--accept-dead-letters] [--config agent.yaml | --token-file
 * F] [--url URL] [--json]`: deletes a ZK terminal's attendance log, which the agent otherwise never
 * does. The agent first reads the log and refuses unless every punch of the device is in the cloud
 * (none waiting in the spool, none in dead letters, unless --accept-dead-letters says those may
 * stay in dead letters only) and the device, paused, still holds exactly what was read. Exit 0 once
 * cleared, 1 when refused, 2 on wrong usage.
 */
export const devicesClearLogCommand: AgentCommand = async (args, io) => {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: { json: { type: 'boolean' }, 'accept-dead-letters': { type: 'boolean' }, ...CONTROL_OPTIONS },
    allowPositionals: true,
  })
  const device = oneDevice('clear-log', positionals)
  const answer = await postToAgent(values, io, `/devices/${encodeURIComponent(device)}/clear-log`, {
    ...(values['accept-dead-letters'] && { acceptDeadLetters: true }),
  })
  if (!answer.ok) return 1
  const result = answer.body as { cleared: number }
  if (values.json) io.stdout(`${JSON.stringify(result, null, 2)}\n`)
  else {
    io.stdout(
      `${device}: its attendance log is cleared (${result.cleared} record(s); every punch of it is in the cloud` +
        `${values['accept-dead-letters'] ? ', or in dead letters' : ''})\n`,
    )
  }
  return 0
}
