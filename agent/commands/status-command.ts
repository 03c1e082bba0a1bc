import { parseArgs } from 'node:util'
import { formatByteSize } from '../config/byte-size.js'
import type { DeviceDetails } from '../inputs/device-report.js'
import type { AgentStatus } from '../status/agent-status.js'
import type { AgentCommand } from './agent-command.js'

export const DEFAULT_STATUS_URL = 'http://127.0.0.1:9410'

function duration(seconds: number | null): string {
  if (seconds === null) return '-'
  if (seconds < 60) return `${seconds}s`
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${seconds % 60}s`
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h ${Math.floor((seconds % 3600) / 60)}m`
  return `${Math.floor(seconds / 86_400)}d ${Math.floor((seconds % 86_400) / 3600)}h`
}

/** A text progress bar: `[#########-----------] 45%`. */
export function progressBar(done: number, total: number, width = 30): string {
  const share = total > 0 ? Math.min(1, Math.max(0, done / total)) : 1
  const filled = Math.round(share * width)
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${Math.floor(share * 100)}%`
}

const ago = (iso: string | null, now: number) =>
  iso === null ? 'never' : `${duration(Math.max(0, Math.round((now - Date.parse(iso)) / 1000)))} ago`

/** A networked terminal's own lines under its device line: who it is, when it spoke, how full it is. */
function terminalLines(d: DeviceDetails, now: number): string[] {
  const indent = ' '.repeat(19)
  const who = [
    d.serialNumber ? `SN ${d.serialNumber}` : null,
    d.address && `at ${d.address}`,
    d.protocolVersion,
    [d.model, d.firmware].filter(Boolean).join(' ') || null,
  ].filter(Boolean)
  const c = d.counts
  const held =
    c.attendanceRecords === null
      ? null
      : `${c.attendanceRecords} record(s) on the terminal${
          c.attendanceCapacity ? ` of ${c.attendanceCapacity} (${Math.floor((d.logUse ?? 0) * 100)}%)` : ''
        }`
  const figures = [held, c.users === null ? null : `${c.users} user(s)`].filter(Boolean)
  const pull = d.pull
  const lines = [`${indent}${who.join(', ')}`]
  if (pull) {
    // A terminal the agent reads: when it last answered and was read (its clock is on the device line).
    lines.push(
      `${indent}last answer ${ago(d.lastContactAt, now)}, session since ${ago(d.lastHandshakeAt, now)}, ` +
        `log read ${ago(pull.lastReadAt, now)} (polled every ${duration(pull.pollEverySeconds)}${pull.realtime ? ', real-time between' : ''}); ` +
        `${d.recordsReceived} record(s) since start, ${d.uploads} log read(s)`,
    )
    if (pull.lastError) {
      lines.push(
        `${indent}${pull.connectionErrors} lost session(s) since start; last error ${pull.lastError.at}: ${pull.lastError.message}`,
      )
    }
    for (const notice of pull.notices.slice(-3)) lines.push(`${indent}${notice.at}: ${notice.message}`)
  } else {
    lines.push(
      `${indent}last request ${ago(d.lastContactAt, now)}, handshake ${ago(d.lastHandshakeAt, now)}, ` +
        `upload ${ago(d.lastUploadAt, now)}; ${d.recordsReceived} record(s) in ${d.uploads} upload(s) since start`,
    )
  }
  if (figures.length > 0) lines.push(`${indent}${figures.join(', ')}`)
  for (const command of d.commands
    .filter((k) => k.state === 'queued' || k.state === 'sent' || k.kind === 'backfill')
    .slice(-3)) {
    const outcome =
      command.state === 'failed' ? `failed: ${command.reason ?? command.returnCode}` : command.state
    lines.push(`${indent}command ${command.id} ${command.text.replace('\t', ' ')}: ${outcome}`)
  }
  return lines
}

/** The status as a person reads it (spool, devices, forwarding, a bar while a backlog drains). */
export function renderStatus(status: AgentStatus, now: number = Date.now()): string {
  const s = status.spool
  const f = status.forwarding
  const lines = [
    `site ${status.agent.site}, up ${duration(status.agent.uptimeSeconds)} (pid ${status.agent.pid}` +
      `${status.agent.version ? `, hajri-agent ${status.agent.version}` : ''})`,
    '',
    `spool      ${s.punches} punch(es) waiting in ${s.chunks} chunk(s), ${formatByteSize(s.bytes)} of ${formatByteSize(s.maxBytes)}` +
      (s.punches > 0 ? `, oldest ${duration(s.oldestUnsentAgeSeconds)} ago` : ''),
  ]
  if (s.full)
    lines.push(
      `           FULL since ${s.fullSince ?? '?'}: MQTT and ADMS punches are being refused and ZK terminals are not read (devices keep them)`,
    )
  lines.push(
    `dead       ${status.deadLetters.count} dead letter(s)${status.deadLetters.count > 0 ? ' (hajri-agent dead-letters list)' : ''}`,
  )
  lines.push(
    `forwarding ${f.ratePerSecond}/s, ${f.forwarded} since start, last success ${f.lastSuccessAt ?? 'never'}`,
  )
  if (f.lastError) lines.push(`           last error ${f.lastError.at}: ${f.lastError.message}`)
  if (f.backlog && f.backlog.peak > 0) {
    lines.push(
      `backlog    ${progressBar(f.backlog.peak - f.backlog.remaining, f.backlog.peak)} ` +
        `${f.backlog.remaining} left${f.backlog.etaSeconds !== null ? `, about ${duration(f.backlog.etaSeconds)} to go` : ''}`,
    )
  }
  lines.push('', 'devices')
  for (const d of status.devices) {
    const skew =
      d.clockSkewSeconds === null ? '' : `, clock ${d.clockSkewSeconds >= 0 ? '+' : ''}${d.clockSkewSeconds}s`
    lines.push(
      `  ${d.id.padEnd(16)} ${d.transports.join('+').padEnd(11)} ${d.state.padEnd(12)} ` +
        `${d.punches} punch(es), last ${d.lastPunchedAt ?? 'never'}${skew}` +
        (d.malformedFrames > 0 ? `, ${d.malformedFrames} malformed` : '') +
        ((d.resends ?? 0) > 0 ? `, ${d.resends} resent` : '') +
        (d.detail ? ` (${d.detail})` : ''),
    )
    if (d.details) lines.push(...terminalLines(d.details, now))
  }
  // An agent from before push terminals answers without the list.
  const strangers = status.unknownDevices ?? []
  if (strangers.length > 0) {
    lines.push('', 'unknown terminals (refused; add them to devices with adms.serialNumber)')
    for (const u of strangers) {
      lines.push(
        `  ${u.serialNumber.padEnd(16)} at ${u.address}, ${u.requests} request(s), last ${ago(u.lastSeenAt, now)}`,
      )
    }
  }
  if (status.alarms.length > 0) lines.push('', 'alarms', ...status.alarms.map((a) => `  ! ${a}`))
  return lines.join('\n')
}

/** `hajri-agent status [--url URL] [--json]`: reads the running agent's local status endpoint. */
export const statusCommand: AgentCommand = async (args, io) => {
  const { values } = parseArgs({
    args: [...args],
    options: { url: { type: 'string' }, json: { type: 'boolean' } },
  })
  const base = (values.url ?? io.env.HAJRI_AGENT_STATUS_URL ?? DEFAULT_STATUS_URL).replace(/\/+$/, '')
  let response: Response
  try {
    response = await fetch(`${base}/status`, { signal: AbortSignal.timeout(5000) })
  } catch (err) {
    io.stderr(`hajri-agent: no agent answers at ${base} (${(err as Error).message}); is it running?\n`)
    return 1
  }
  if (!response.ok) {
    io.stderr(`hajri-agent: ${base}/status answered ${response.status}\n`)
    return 1
  }
  const status = (await response.json()) as AgentStatus
  io.stdout(values.json ? `${JSON.stringify(status, null, 2)}\n` : `${renderStatus(status)}\n`)
  return status.alarms.length > 0 ? 3 : 0
}
