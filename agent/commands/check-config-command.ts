import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { formatByteSize } from '../config/byte-size.js'
import { ConfigFileError, formatProblem } from '../config/config-file-error.js'
import { configWarnings } from '../config/config-warnings.js'
import { loadAgentConfig } from '../config/load.js'
import type { AgentConfig, DeviceConfig } from '../config/schema.js'
import { applyPinRule } from '../punch/normalize.js'
import { type AgentCommand, AgentUsageError } from './agent-command.js'

/**
 * `hajri-agent check-config --config agent.yaml [--json]` (docs/decisions/0023-agent-yaml-configuration.md):
 * every problem with its path, one per line, and exit status 2; or "ok" and what the agent would run with,
 * then any warnings (config-warnings.ts: "warning: path: message" on stderr, exit status still 0). Nothing
 * printed here is a secret: the summary names settings, not credentials.
 */
export const checkConfigCommand: AgentCommand = async (args, io) => {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: { config: { type: 'string', short: 'c' }, json: { type: 'boolean', default: false } },
    allowPositionals: true,
    strict: true,
  })
  if (positionals.length > 0) {
    throw new AgentUsageError(`check-config takes no operand (got "${positionals[0]}"); use --config FILE`)
  }
  if (values.config === undefined || values.config === '') {
    throw new AgentUsageError('check-config needs --config FILE')
  }
  const file = resolve(io.cwd, values.config)
  let config: AgentConfig
  try {
    config = await loadAgentConfig(file, io.env)
  } catch (err) {
    if (!(err instanceof ConfigFileError)) throw err
    if (values.json) {
      io.stdout(`${JSON.stringify({ ok: false, file: err.file, problems: err.problems }, null, 2)}\n`)
    } else {
      const count = err.problems.length === 1 ? '1 problem' : `${err.problems.length} problems`
      io.stderr(`hajri-agent: ${err.file}: ${count}; the agent would not start\n`)
      for (const problem of err.problems) io.stderr(`${formatProblem(problem)}\n`)
    }
    return 2
  }
  // Warnings do not stop the agent (exit 0): settings that work and leave something open.
  const warnings = configWarnings(config)
  if (values.json) {
    const report = { ok: true, file, problems: [], warnings, summary: summarize(config) }
    io.stdout(`${JSON.stringify(report, null, 2)}\n`)
  } else {
    io.stdout(`ok: ${file}\n${describe(config)}`)
    for (const warning of warnings) io.stderr(`warning: ${formatProblem(warning)}\n`)
  }
  return 0
}

function transports(device: DeviceConfig): string[] {
  const out: string[] = []
  if (device.mqtt) out.push(`mqtt ${device.mqtt.topic} (${device.mqtt.format})`)
  if (device.serial) {
    const s = device.serial
    const frame = `${s.dataBits}${s.parity.charAt(0).toUpperCase()}${s.stopBits}`
    out.push(`serial ${s.path} ${s.baudRate} ${frame}, ${s.framing.type} framing (${s.format})`)
  }
  if (device.adms) {
    const only = device.adms.allowFrom ? ` from ${device.adms.allowFrom.join(', ')} only` : ''
    out.push(`adms terminal ${device.adms.serialNumber}${only}`)
  }
  if (device.zk) {
    const zk = device.zk
    // The comm key is a device password: only whether there is one.
    out.push(
      `zk terminal ${zk.host}:${zk.port} (${zk.transport}${zk.commKey ? ', comm key set' : ''}), read every ${zk.pollEvery}` +
        `${zk.realtime ? ', real-time between' : ''}${zk.setTime ? ', clock set from this machine' : ''}`,
    )
  }
  return out
}

function direction(device: DeviceConfig): string {
  const pin = device.pin ? `; PIN 42 → ${applyPinRule('42', device.pin)}` : ''
  if (device.punchType) return `always ${device.punchType}${pin}`
  return `${device.statusMap ? 'statusMap' : 'ZKTeco status codes'}${pin}`
}

function admsSummary(config: AgentConfig): string {
  const adms = config.adms
  if (!adms) return 'none'
  const from = adms.allowFrom ? `from ${adms.allowFrom.join(', ')}` : 'from any address'
  return `listening on ${adms.listen} ${from}, poll every ${adms.pollSeconds} s`
}

function brokerSummary(config: AgentConfig): string {
  const { embedded, external } = config.mqtt ?? {}
  if (embedded) {
    const users =
      embedded.users.length === 0 ? 'no users (anyone may connect)' : `${embedded.users.length} user(s)`
    return `embedded broker on ${embedded.host}:${embedded.port}${embedded.tls ? ' with TLS' : ''}, ${users}`
  }
  if (external) return `external broker ${external.url} as ${external.clientId}`
  return 'none'
}

/** The human summary: what the agent would run with, one setting per line. */
function describe(config: AgentConfig): string {
  const lines = [
    `site     ${config.site.id} (${config.site.timezone})`,
    `cloud    ${config.cloud.url} as client ${config.cloud.clientId}`,
    `mqtt     ${brokerSummary(config)}`,
    `adms     ${admsSummary(config)}`,
    `devices  ${config.devices.length}`,
    ...config.devices.map(
      (d) => `  ${d.id}: ${transports(d).join(' + ')}; ${direction(d)}${d.timezone ? `; ${d.timezone}` : ''}`,
    ),
    `spool    ${config.spool.dir} (at most ${formatByteSize(config.spool.maxBytes)})`,
    `status   http://${config.status.listen}`,
  ]
  return `${lines.join('\n')}\n`
}

/** The same for scripts (--json). */
function summarize(config: AgentConfig) {
  return {
    site: { id: config.site.id, timezone: config.site.timezone },
    cloud: { url: config.cloud.url, clientId: config.cloud.clientId },
    mqtt: config.mqtt?.embedded ? 'embedded' : config.mqtt?.external ? 'external' : null,
    adms: config.adms ? { listen: config.adms.listen, allowFrom: config.adms.allowFrom ?? null } : null,
    devices: config.devices.map((d) => ({
      id: d.id,
      transports: [
        ...(d.mqtt ? ['mqtt'] : []),
        ...(d.serial ? ['serial'] : []),
        ...(d.adms ? ['adms'] : []),
        ...(d.zk ? ['zk'] : []),
      ],
      ...(d.mqtt && { topic: d.mqtt.topic }),
      ...(d.serial && { port: d.serial.path }),
      ...(d.adms && { serialNumber: d.adms.serialNumber }),
      ...(d.zk && { address: `${d.zk.host}:${d.zk.port}` }),
    })),
    spool: { dir: config.spool.dir, maxBytes: config.spool.maxBytes },
    status: { listen: config.status.listen },
  }
}
