import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { agentVersion } from '../../../agent/agent-version.js'
import { progressBar, renderStatus } from '../../../agent/commands/status-command.js'
import type { Component } from '../../../agent/component.js'
import type { AgentConfig } from '../../../agent/config/schema.js'
import { Gateway } from '../../../agent/gateway.js'
import type { InputContext } from '../../../agent/inputs/input-context.js'
import { runAgentCli } from '../../../agent/main.js'
import type { AgentStatus } from '../../../agent/status/agent-status.js'
import { formatInZone, nowMicros } from '../../../shared/time.js'
import { captureCli } from '../../support/cli-capture.js'
import { FakeCloud } from '../../support/fake-cloud.js'
import { unusedPort } from '../../support/unused-port.js'

const log = pino({ level: 'silent' })

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((r) => setTimeout(r, 10))
}

/** Runs `hajri-agent ...` in-process, capturing what it writes. */
function cli(argv: string[], env: NodeJS.ProcessEnv = {}) {
  return captureCli(runAgentCli, argv, { env, cwd: tmpdir() })
}

class FakeInput implements Component {
  context: InputContext | undefined
  async start() {}
  async stop() {}
}

/** Tokens, and punches accepted, each answered when the test releases it while `holdPunches` is on. */
const cloud = new FakeCloud()
beforeAll(() => cloud.start())
afterAll(() => cloud.stop())

let cleanup: (() => Promise<void>)[] = []
afterEach(async () => {
  cloud.holdPunches = false
  for (const step of cleanup.reverse()) await step()
  cleanup = []
})

async function startAgent(
  spool: Partial<AgentConfig['spool']> = {},
  cloudSettings: Partial<AgentConfig['cloud']> = {},
) {
  const dir = await mkdtemp(join(tmpdir(), 'hajri-status-cmd-'))
  cleanup.push(() => rm(dir, { recursive: true, force: true }))
  const input = new FakeInput()
  const gateway = new Gateway(
    {
      site: { id: 'pune-plant-1', timezone: 'Asia/Kolkata', clockFloor: '2020-01-01T00:00:00Z' },
      cloud: {
        url: cloud.url,
        clientId: 'hjc_agent',
        clientSecret: 'hjs_secret',
        scope: 'attendance:write',
        timeoutSeconds: 30,
        concurrency: 1,
        batchSize: 500,
        ...cloudSettings,
      },
      spool: { dir: join(dir, 'spool'), maxBytes: 1 << 30, chunkPunches: 500, ...spool },
      status: { listen: '127.0.0.1:0' },
      log: { level: 'silent' },
      devices: [
        { id: 'gate-1', mqtt: { topic: 'punches/gate-1', format: 'json' } },
        {
          id: 'main-door',
          serial: {
            path: '/dev/ttyUSB9',
            baudRate: 9600,
            dataBits: 8,
            parity: 'none',
            stopBits: 1,
            framing: { type: 'line', delimiter: '\n' },
            format: 'zk-attlog',
          },
        },
      ],
    },
    {
      log,
      createInputs: (context) => {
        input.context = context
        return [input]
      },
    },
  )
  await gateway.start()
  cleanup.push(() => gateway.stop())
  const send = (frame: object) => {
    if (!input.context) throw new Error('no context')
    return input.context.sink.accept('gate-1', 'mqtt', Buffer.from(JSON.stringify(frame)))
  }
  return { gateway, base: gateway.statusAddress ?? '', events: input.context?.events, send }
}

/** A status with everything in it, for rendering. */
function fullStatus(): AgentStatus {
  return {
    agent: { site: 'pune-plant-1', pid: 4242, startedAt: '2026-11-20T03:00:00.000Z', uptimeSeconds: 90_061 },
    spool: {
      punches: 1500,
      chunks: 3,
      bytes: 1536,
      maxBytes: 2 * 1024 ** 3,
      oldestUnsentAt: '2026-11-21T03:55:00.000Z',
      oldestUnsentAgeSeconds: 303,
      full: true,
      fullSince: '2026-11-21T04:00:00.000Z',
      quarantinedChunks: 0,
    },
    deadLetters: { count: 2 },
    devices: [
      {
        id: 'gate-1',
        transports: ['mqtt'],
        state: 'connected',
        detail: null,
        stateSince: '2026-11-21T03:00:00.000Z',
        punches: 120,
        resends: 0,
        malformedFrames: 0,
        lastPunchAt: '2026-11-21T04:00:00.000Z',
        lastPunchedAt: '2026-11-21T09:30:00+05:30',
        clockSkewSeconds: 4,
      },
      {
        id: 'main-door',
        transports: ['serial'],
        state: 'waiting',
        detail: 'cannot open /dev/ttyUSB0',
        stateSince: '2026-11-21T03:00:00.000Z',
        punches: 0,
        resends: 0,
        malformedFrames: 3,
        lastPunchAt: null,
        lastPunchedAt: null,
        clockSkewSeconds: -75,
      },
      {
        id: 'canteen',
        transports: ['mqtt', 'serial'],
        state: 'unknown',
        detail: null,
        stateSince: null,
        punches: 0,
        resends: 0,
        malformedFrames: 0,
        lastPunchAt: null,
        lastPunchedAt: null,
        clockSkewSeconds: null,
      },
    ],
    unknownDevices: [],
    forwarding: {
      forwarded: 2500,
      ratePerSecond: 12.5,
      lastSuccessAt: '2026-11-21T04:00:00.000Z',
      lastError: { at: '2026-11-21T04:01:00.000Z', message: 'the cloud answered 503', retryInMs: 750 },
      backlog: { peak: 2000, remaining: 1500, etaSeconds: 3725 },
    },
    alarms: [
      'spool full (the disk is full): MQTT and ADMS punches are being refused and ZK terminals are not read (devices keep them)',
      'device main-door waiting',
    ],
  }
}

describe('progressBar', () => {
  it('fills in proportion, and writes the whole percentage done', () => {
    expect(progressBar(0, 10)).toBe(`[${'-'.repeat(30)}] 0%`)
    expect(progressBar(5, 10, 10)).toBe('[#####-----] 50%')
    expect(progressBar(1, 4)).toBe(`[${'#'.repeat(8)}${'-'.repeat(22)}] 25%`)
    expect(progressBar(10, 10, 10)).toBe('[##########] 100%')
  })

  it('never reports 100% before the end', () => {
    expect(progressBar(999, 1000, 10)).toBe('[##########] 99%')
  })

  it('stays in bounds for odd input', () => {
    expect(progressBar(0, 0, 4)).toBe('[####] 100%')
    expect(progressBar(15, 10, 4)).toBe('[####] 100%')
    expect(progressBar(-3, 10, 4)).toBe('[----] 0%')
  })
})

describe('renderStatus', () => {
  it('shows the spool, dead letters, forwarding, backlog, devices and alarms', () => {
    expect(renderStatus(fullStatus()).split('\n')).toEqual([
      'site pune-plant-1, up 1d 1h (pid 4242)',
      '',
      'spool      1500 punch(es) waiting in 3 chunk(s), 1.5 KiB of 2 GiB, oldest 5m 3s ago',
      '           FULL since 2026-11-21T04:00:00.000Z: MQTT and ADMS punches are being refused and ZK terminals are not read (devices keep them)',
      'dead       2 dead letter(s) (hajri-agent dead-letters list)',
      'forwarding 12.5/s, 2500 since start, last success 2026-11-21T04:00:00.000Z',
      '           last error 2026-11-21T04:01:00.000Z: the cloud answered 503',
      `backlog    [${'#'.repeat(8)}${'-'.repeat(22)}] 25% 1500 left, about 1h 2m to go`,
      '',
      'devices',
      '  gate-1           mqtt        connected    120 punch(es), last 2026-11-21T09:30:00+05:30, clock +4s',
      '  main-door        serial      waiting      0 punch(es), last never, clock -75s, 3 malformed (cannot open /dev/ttyUSB0)',
      '  canteen          mqtt+serial unknown      0 punch(es), last never',
      '',
      'alarms',
      '  ! spool full (the disk is full): MQTT and ADMS punches are being refused and ZK terminals are not read (devices keep them)',
      '  ! device main-door waiting',
    ])
  })

  it('leaves out what is not there: no backlog, no error, no alarms', () => {
    const status = fullStatus()
    status.spool = { ...status.spool, punches: 0, full: false, fullSince: null, oldestUnsentAgeSeconds: null }
    status.deadLetters.count = 0
    status.forwarding = { ...status.forwarding, lastError: null, backlog: null }
    status.agent.uptimeSeconds = 42
    status.alarms = []
    const lines = renderStatus(status).split('\n')
    expect(lines[0]).toBe('site pune-plant-1, up 42s (pid 4242)')
    expect(lines[2]).toBe('spool      0 punch(es) waiting in 3 chunk(s), 1.5 KiB of 2 GiB')
    expect(lines[3]).toBe('dead       0 dead letter(s)')
    expect(lines.some((l) => l.startsWith('backlog') || l.includes('last error') || l === 'alarms')).toBe(
      false,
    )
  })

  it('shows a ZK terminal the agent reads: who it is, its session and reads, its last error and notices', () => {
    const status = fullStatus()
    const now = Date.parse('2026-11-21T04:05:00.000Z')
    status.devices = [
      {
        id: 'store-gate',
        transports: ['zk'],
        state: 'connected',
        detail: 'tcp 192.168.10.30:4370',
        stateSince: '2026-11-21T01:00:00.000Z',
        punches: 12,
        resends: 0,
        malformedFrames: 0,
        lastPunchAt: '2026-11-21T04:00:00.000Z',
        lastPunchedAt: '2026-11-21T09:30:00+05:30',
        clockSkewSeconds: -3,
        details: {
          protocol: 'zk',
          serialNumber: '',
          address: '192.168.10.30:4370',
          protocolVersion: 'zk tcp',
          model: 'ZEM560_TFT',
          firmware: null,
          lastContactAt: '2026-11-21T04:04:57.000Z',
          lastHandshakeAt: '2026-11-21T01:00:00.000Z',
          lastUploadAt: '2026-11-21T04:00:00.000Z',
          recordsReceived: 12,
          uploads: 2,
          counts: {
            users: 86,
            fingerprints: null,
            faces: null,
            attendanceRecords: 4210,
            userCapacity: null,
            fingerprintCapacity: null,
            faceCapacity: null,
            attendanceCapacity: 100_000,
          },
          logUse: 0.0421,
          commands: [],
          pull: {
            transport: 'auto',
            pollEverySeconds: 300,
            realtime: true,
            recordsRead: 4210,
            lastReadAt: '2026-11-21T04:00:00.000Z',
            clockSkewSeconds: -3,
            clockCheckedAt: '2026-11-21T04:04:57.000Z',
            connectionErrors: 1,
            lastError: {
              at: '2026-11-21T02:00:00.000Z',
              code: 'zk_timeout',
              message: 'the device sent nothing',
            },
            notices: [
              { at: '2026-11-21T03:00:00.000Z', kind: 'log_cleared', message: 'the log was cleared' },
            ],
          },
        },
      },
    ]
    const lines = renderStatus(status, now).split('\n')
    const at = lines.indexOf('devices')
    expect(lines.slice(at + 1, at + 7)).toEqual([
      '  store-gate       zk          connected    12 punch(es), last 2026-11-21T09:30:00+05:30, clock -3s (tcp 192.168.10.30:4370)',
      '                   at 192.168.10.30:4370, zk tcp, ZEM560_TFT',
      '                   last answer 3s ago, session since 3h 5m ago, log read 5m 0s ago (polled every 5m 0s, real-time between); 12 record(s) since start, 2 log read(s)',
      '                   1 lost session(s) since start; last error 2026-11-21T02:00:00.000Z: the device sent nothing',
      '                   2026-11-21T03:00:00.000Z: the log was cleared',
      '                   4210 record(s) on the terminal of 100000 (4%), 86 user(s)',
    ])
  })

  it('shows an estimate only when there is a rate to make one from', () => {
    const status = fullStatus()
    status.forwarding.backlog = { peak: 10, remaining: 10, etaSeconds: null }
    expect(renderStatus(status)).toContain(`backlog    [${'-'.repeat(30)}] 0% 10 left\n`)
  })
})

describe('hajri-agent status, against a running agent', () => {
  it('shows the spool line, the forwarding line and the devices table, and exits 0 with no alarms', async () => {
    const agent = await startAgent()
    const result = await cli(['status', '--url', agent.base])
    expect(result).toMatchObject({ code: 0, stderr: '' })
    const lines = result.stdout.split('\n')
    expect(lines[0]).toMatch(
      new RegExp(
        `^site pune-plant-1, up \\d+s \\(pid ${process.pid}, hajri-agent ${agentVersion().replaceAll('.', '\\.')}\\)$`,
      ),
    )
    expect(lines).toContain('spool      0 punch(es) waiting in 0 chunk(s), 0 bytes of 1 GiB')
    expect(lines).toContain('forwarding 0/s, 0 since start, last success never')
    expect(lines).toContain('  gate-1           mqtt        unknown      0 punch(es), last never')
    expect(lines).toContain('  main-door        serial      unknown      0 punch(es), last never')
    expect(result.stdout).not.toContain('alarms')
  })

  it('prints the status JSON with --json', async () => {
    const agent = await startAgent()
    const result = await cli(['status', '--url', `${agent.base}/`, '--json'])
    expect(result.code).toBe(0)
    const printed = JSON.parse(result.stdout) as AgentStatus
    const served = (await (await fetch(`${agent.base}/status`)).json()) as AgentStatus
    expect({ ...printed, agent: { ...printed.agent, uptimeSeconds: 0 } }).toEqual({
      ...served,
      agent: { ...served.agent, uptimeSeconds: 0 },
    })
  })

  it('exits 3 when there are alarms, and lists them', async () => {
    const agent = await startAgent()
    agent.events?.emit('deviceState', { deviceId: 'main-door', state: 'waiting', detail: 'ENOENT' })
    const result = await cli(['status', '--url', agent.base])
    expect(result.code).toBe(3)
    expect(result.stdout).toMatch(/\nalarms\n {2}! device main-door waiting: ENOENT\n$/)
    const json = await cli(['status', '--url', agent.base, '--json'])
    expect(json.code).toBe(3)
    expect((JSON.parse(json.stdout) as AgentStatus).alarms).toEqual(['device main-door waiting: ENOENT'])
  })

  it('reads the address from HAJRI_AGENT_STATUS_URL when --url is not given', async () => {
    const agent = await startAgent()
    const result = await cli(['status', '--json'], { HAJRI_AGENT_STATUS_URL: agent.base })
    expect(result.code).toBe(0)
    expect((JSON.parse(result.stdout) as AgentStatus).agent.site).toBe('pune-plant-1')
  })

  it('shows a progress bar while a backlog drains', async () => {
    // One punch a chunk and a request, answered one by one by the cloud. (By default consecutive
    // chunks share a batch request, and the four punches would go in one.)
    cloud.holdPunches = true
    const agent = await startAgent({ chunkPunches: 1 }, { batchSize: 1 })
    const at = (m: number) => formatInZone(Math.floor(nowMicros() / 1e6 - m * 60) * 1e6, 'Asia/Kolkata')
    await agent.send([1, 2, 3, 4].map((m) => ({ employeeCode: 'E001', punchType: 'IN', punchedAt: at(m) })))
    const waiting = await cli(['status', '--url', agent.base])
    expect(waiting.code).toBe(0)
    expect(waiting.stdout).toContain(`\nbacklog    [${'-'.repeat(30)}] 0% 4 left\n`)
    expect(waiting.stdout).toMatch(/\nspool {6}4 punch\(es\) waiting in 4 chunk\(s\), .*, oldest \d+s ago\n/)

    await cloud.releaseOne()
    await until(() => agent.gateway.spool.stats().items === 3)
    const draining = await cli(['status', '--url', agent.base])
    expect(draining.stdout).toMatch(
      new RegExp(`\\nbacklog {4}\\[${'#'.repeat(8)}${'-'.repeat(22)}\\] 25% 3 left, about \\d+s to go\\n`),
    )
    expect(draining.stdout).toMatch(/\nforwarding [\d.]+\/s, 1 since start, last success \d{4}-/)

    for (let i = 0; i < 3; i++) await cloud.releaseOne()
    await until(() => agent.gateway.spool.stats().items === 0)
    expect((await cli(['status', '--url', agent.base])).stdout).not.toContain('backlog')
  })

  it('exits 1 when no agent answers', async () => {
    const url = `http://127.0.0.1:${await unusedPort()}`
    const result = await cli(['status', '--url', url])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toMatch(
      new RegExp(`^hajri-agent: no agent answers at ${url} \\(.*\\); is it running\\?\\n$`),
    )
  })

  it('exits 1 when what answers is not an agent', async () => {
    const other = createServer((_req, res) => res.writeHead(500).end())
    other.listen(0, '127.0.0.1')
    await once(other, 'listening')
    cleanup.push(async () => {
      other.close()
    })
    const url = `http://127.0.0.1:${(other.address() as { port: number }).port}`
    const result = await cli(['status', '--url', url])
    expect(result).toEqual({ code: 1, stdout: '', stderr: `hajri-agent: ${url}/status answered 500\n` })
  })

  it('exits 2 with usage for an option it does not know', async () => {
    const result = await cli(['status', '--verbose'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('Usage:')
  })
})
