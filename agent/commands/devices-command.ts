import { parseArgs } from 'node:util'
import type { DeviceCommandStatus } from '../inputs/device-report.js'
import { type AgentCommand, AgentUsageError } from './agent-command.js'
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
  const [device, ...extra] = positionals
  if (device === undefined) throw new AgentUsageError('devices backfill needs the device id')
  if (extra.length > 0) throw new AgentUsageError(`devices backfill takes one device (got "${extra[0]}" too)`)
  if (values.from === undefined || values.to === undefined) {
    throw new AgentUsageError(
      'devices backfill needs --from and --to (e.g. --from 2026-11-01 --to 2026-11-20)',
    )
  }
  const control = await agentControl(values, io)
  const base = control.url
  let response: Response
  try {
    response = await fetch(`${base}/devices/${encodeURIComponent(device)}/backfill`, {
      method: 'POST',
      headers: control.headers,
      body: JSON.stringify({ from: values.from, to: values.to }),
      signal: AbortSignal.timeout(10_000),
    })
  } catch (err) {
    io.stderr(`hajri-agent: no agent answers at ${base} (${(err as Error).message}); is it running?\n`)
    return 1
  }
  const body = (await response.json().catch(() => ({}))) as {
    command?: DeviceCommandStatus
    message?: string
  }
  if (response.status === 401) {
    io.stderr(`hajri-agent: ${control.refusal}\n`)
    return 1
  }
  if (!response.ok || !body.command) {
    io.stderr(`hajri-agent: ${body.message ?? `the agent answered ${response.status}`}\n`)
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
