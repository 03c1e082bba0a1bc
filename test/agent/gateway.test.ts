import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises'
import { createServer, request, type Server } from 'node:http'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import pino from 'pino'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { agentVersion } from '../../agent/agent-version.js'
import type { Component } from '../../agent/component.js'
import type { AgentConfig } from '../../agent/config/schema.js'
import { EventBus } from '../../agent/events.js'
import { Gateway } from '../../agent/gateway.js'
import type { InputContext } from '../../agent/inputs/input-context.js'
import { AdmsDevice } from '../../agent/simulator/adms-device.js'
import { Spool } from '../../agent/spool/spool.js'
import type { AgentStatus } from '../../agent/status/agent-status.js'
import { formatInZone, nowMicros, parseTimestamp } from '../../shared/time.js'
import { employee, TEST_ACTOR, TestCloud } from '../support/cloud-harness.js'
import { unusedPort } from '../support/unused-port.js'
import { startSimulatorTestAgent } from './simulator/simulator-test-agent.js'

/**
 * The agent as composed (docs/development/architecture.md#data-flow-in-the-agent): a real Gateway over a
 * spool in a temporary directory, forwarding to a real cloud (TestCloud, listening), its status listener on a
 * free port. Devices are a fake input that hands frames to the gateway's own sink, as serial and MQTT inputs
 * do.
 */

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const log = pino({ level: 'silent' })

/** Polls (no fixed wait) until `condition` holds; the test's timeout is the limit. */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((r) => setTimeout(r, 10))
}

/** Stands in for the serial and MQTT inputs: started and stopped with the gateway, driven by the test. */
class FakeInput implements Component {
  context: InputContext | undefined
  running = false
  async start() {
    this.running = true
  }
  async stop() {
    this.running = false
  }
  /** A device sends a frame: resolves once the gateway has stored it (as a PUBACK would wait). */
  async send(deviceId: string, frame: string | object, transport: 'mqtt' | 'serial' = 'mqtt'): Promise<void> {
    const text = typeof frame === 'string' ? frame : JSON.stringify(frame)
    if (!this.context) throw new Error('no context')
    await this.context.sink.accept(deviceId, transport, Buffer.from(text))
  }
}

/** Whether anything accepts TCP connections at `address`. */
function listening(address: string): Promise<boolean> {
  const { hostname, port } = new URL(address)
  return new Promise((done) => {
    const socket = connect(Number(port), hostname)
    socket.once('connect', () => {
      socket.destroy()
      done(true)
    })
    socket.once('error', () => done(false))
  })
}

/**
 * A relay to the cloud that holds punch requests until the test releases them, one by one: a
 * backlog that drains at the test's pace (or fails them, as a cloud that is down). Token requests
 * pass straight through.
 */
class GatedRelay {
  readonly held: (() => void)[] = []
  /** What punch requests get: held for release, a 503 (the cloud is down), or passed straight on. */
  mode: 'hold' | 'fail' | 'pass' = 'hold'
  private server: Server | undefined
  url = ''

  constructor(private readonly target: string) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const body: Buffer[] = []
      req.on('data', (c: Buffer) => body.push(c))
      req.on('end', () => {
        const forward = () => {
          const upstream = request(
            new URL(req.url ?? '/', this.target),
            { method: req.method, headers: req.headers },
            (up) => {
              res.writeHead(up.statusCode ?? 502, up.headers)
              up.pipe(res)
            },
          )
          // A request still held when the test ends is let through as everything stops: the cloud
          // may close its socket under it, and nobody waits for that answer any more.
          upstream.on('error', () => res.destroy())
          upstream.end(Buffer.concat(body))
        }
        if (!req.url?.includes('/attendance/punches')) forward()
        else if (this.mode === 'fail') res.writeHead(503, { 'retry-after': '0' }).end()
        else if (this.mode === 'hold') this.held.push(forward)
        else forward()
      })
    })
    this.server.listen(0, '127.0.0.1')
    await once(this.server, 'listening')
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`
  }

  /** Lets the oldest held request through, once one is there. */
  async releaseOne(): Promise<void> {
    await until(() => this.held.length > 0)
    this.held.shift()?.()
  }

  async stop(): Promise<void> {
    for (const forward of this.held.splice(0)) forward()
    this.server?.closeAllConnections()
    this.server?.close()
  }
}

/** `name{labels}` → value, from Prometheus text. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    out.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return out
}

/** A punch minutes ago (whole seconds), as a device in Pune writes it. */
function recently(minutesAgo: number): { micros: number; text: string } {
  const micros = Math.floor((nowMicros() - minutesAgo * 60_000_000) / 1_000_000) * 1_000_000
  return { micros, text: formatInZone(micros, 'Asia/Kolkata') }
}

const cloud = new TestCloud('sqlite')
let cloudUrl: string
let tenantId: string
let clientId: string
let clientSecret: string

beforeAll(async () => {
  await cloud.start()
  cloudUrl = await cloud.app.listen({ host: '127.0.0.1', port: 0 })
  tenantId = await cloud.createTenant()
  await cloud.upsertEmployees(
    tenantId,
    ['E001', 'E002', 'E003'].map((code) => employee(code)),
  )
  const app = await cloud.services.oauthApps.create(
    tenantId,
    { name: 'agent', scopes: ['attendance:write'], rateLimitPerMinute: 100_000 },
    TEST_ACTOR,
  )
  clientId = app.clientId
  clientSecret = app.clientSecret
})
afterAll(() => cloud.stop())

/** The punches the cloud has stored for the tenant. */
async function cloudPunches() {
  const page = await cloud.services.punches.list(
    { id: tenantId, timeZone: 'Asia/Kolkata', backfillDays: 90 },
    { limit: 500 },
  )
  return page.data
}

/** The externalIds the cloud has stored. */
async function storedInCloud(): Promise<Set<string>> {
  return new Set((await cloudPunches()).flatMap((p) => (p.externalId ? [p.externalId] : [])))
}

let cleanup: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const step of cleanup.reverse()) await step()
  cleanup = []
})

interface AgentOptions {
  cloudUrl?: string
  cloud?: Partial<AgentConfig['cloud']>
  spool?: Partial<AgentConfig['spool']>
  /** Runs on the spool directory before the agent starts. */
  beforeStart?: (spoolDir: string) => Promise<void>
}

async function startAgent(options: AgentOptions = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'hajri-gateway-'))
  cleanup.push(() => rm(dir, { recursive: true, force: true }))
  const config: AgentConfig = {
    site: { id: 'pune-plant-1', timezone: 'Asia/Kolkata', clockFloor: '2020-01-01T00:00:00Z' },
    cloud: {
      url: options.cloudUrl ?? cloudUrl,
      clientId,
      clientSecret,
      scope: 'attendance:write',
      timeoutSeconds: 30,
      concurrency: 1,
      batchSize: 500,
      ...options.cloud,
    },
    spool: { dir: join(dir, 'spool'), maxBytes: 1 << 30, chunkPunches: 500, ...options.spool },
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
  }
  await options.beforeStart?.(config.spool.dir)
  const input = new FakeInput()
  const gateway = new Gateway(config, {
    log,
    createInputs: (context) => {
      input.context = context
      return [input]
    },
  })
  await gateway.start()
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    await gateway.stop()
  }
  cleanup.push(stop)
  const base = gateway.statusAddress ?? ''
  return {
    gateway,
    input,
    base,
    config,
    stop,
    status: async () => (await (await fetch(`${base}/status`)).json()) as AgentStatus,
    metrics: async () => samples(await (await fetch(`${base}/metrics`)).text()),
    device: async (id: string) =>
      ((await (await fetch(`${base}/status`)).json()) as AgentStatus).devices.find((d) => d.id === id),
  }
}

describe('GET /status', () => {
  it('answers the status of an idle agent: nothing waiting, devices unheard, no alarms', async () => {
    const agent = await startAgent()
    expect(agent.base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const status = await agent.status()
    expect(status).toEqual({
      agent: {
        site: 'pune-plant-1',
        pid: process.pid,
        startedAt: expect.any(String),
        uptimeSeconds: expect.any(Number),
        version: agentVersion(),
      },
      spool: {
        punches: 0,
        chunks: 0,
        bytes: 0,
        maxBytes: 1 << 30,
        oldestUnsentAt: null,
        oldestUnsentAgeSeconds: null,
        full: false,
        fullSince: null,
        quarantinedChunks: 0,
      },
      deadLetters: { count: 0 },
      devices: [
        expect.objectContaining({ id: 'gate-1', transports: ['mqtt'], state: 'unknown', punches: 0 }),
        expect.objectContaining({ id: 'main-door', transports: ['serial'], state: 'unknown', punches: 0 }),
      ],
      unknownDevices: [],
      forwarding: { forwarded: 0, ratePerSecond: 0, lastSuccessAt: null, lastError: null, backlog: null },
      alarms: [],
    })
    expect(Date.parse(status.agent.startedAt)).toBeLessThanOrEqual(Date.now())
    expect(agent.input.running).toBe(true)
  })

  it("shows each device's last punch and clock skew once its punches are through the intake", async () => {
    const agent = await startAgent()
    const punch = recently(2)
    const before = nowMicros()
    await agent.input.send('gate-1', { employeeCode: 'E001', punchType: 'IN', punchedAt: punch.text })
    const after = nowMicros()
    // An ATTLOG device with no time problem: its local time, read in the site zone.
    await agent.input.send(
      'main-door',
      `E002\t${punch.text.slice(0, 19).replace('T', ' ')}\t1\t1\t0`,
      'serial',
    )
    // The cloud's acceptance is counted before the chunks leave the spool: wait for both.
    await until(async () => {
      const { forwarding, spool } = await agent.status()
      return forwarding.forwarded === 2 && spool.punches === 0
    })
    const status = await agent.status()
    const gate = status.devices.find((d) => d.id === 'gate-1')
    expect(gate).toMatchObject({ punches: 1, lastPunchedAt: punch.text, malformedFrames: 0 })
    // About two minutes behind: exactly how much depends on when the intake read its clock.
    expect(gate?.clockSkewSeconds).toBeGreaterThanOrEqual(Math.round((punch.micros - after) / 1e6))
    expect(gate?.clockSkewSeconds).toBeLessThanOrEqual(Math.round((punch.micros - before) / 1e6))
    expect(Date.parse(gate?.lastPunchAt ?? '')).toBeGreaterThanOrEqual(Math.floor(before / 1000))
    expect(status.devices.find((d) => d.id === 'main-door')).toMatchObject({
      punches: 1,
      lastPunchedAt: punch.text,
    })
    expect(status.spool).toMatchObject({ punches: 0, chunks: 0, oldestUnsentAt: null })
    expect(status.forwarding).toMatchObject({ forwarded: 2, lastError: null, backlog: null })
    expect(status.forwarding.ratePerSecond).toBeGreaterThan(0)
    expect(status.forwarding.lastSuccessAt).not.toBeNull()
    expect(status.alarms).toEqual([])
  })

  it('shows a device that sends no time with no clock skew', async () => {
    const agent = await startAgent()
    await agent.input.send('gate-1', { employeeCode: 'E003', punchType: 'OUT' })
    expect(await agent.device('gate-1')).toMatchObject({ punches: 1, clockSkewSeconds: 0 })
  })

  it('counts malformed frames per device, and keeps them in dead letters', async () => {
    const agent = await startAgent()
    await agent.input.send('gate-1', 'this is not json')
    expect(await agent.device('gate-1')).toMatchObject({ punches: 0, malformedFrames: 1 })
    expect((await agent.status()).deadLetters.count).toBe(1)
  })

  it('shows what waits, how old it is, the last error and an alarm while the cloud is unreachable', async () => {
    // A punch left in the spool an hour ago (a chunk file dated then), and two new ones.
    const hourAgo = Math.floor(Date.now() / 1000) * 1000 - 3_600_000
    const agent = await startAgent({
      cloudUrl: `http://127.0.0.1:${await unusedPort()}`,
      beforeStart: async (dir) => {
        const spool = new Spool({ dir, maxBytes: 1 << 30, chunkPunches: 500, log, events: new EventBus(log) })
        await spool.start()
        await spool.append([
          {
            id: `hjp_${'0'.repeat(31)}1`,
            deviceId: 'gate-1',
            employeeCode: 'E003',
            punchType: 'IN',
            punchedAt: recently(61).text,
            receivedAt: new Date(hourAgo).toISOString(),
          },
        ])
        await spool.stop()
        for (const name of await readdir(dir))
          if (name.startsWith('chunk-')) await utimes(join(dir, name), hourAgo / 1000, hourAgo / 1000)
      },
    })
    await agent.input.send('gate-1', [
      { employeeCode: 'E001', punchType: 'IN', punchedAt: recently(3).text },
      { employeeCode: 'E002', punchType: 'IN', punchedAt: recently(2).text },
    ])
    await until(async () => (await agent.status()).forwarding.lastError !== null)
    const before = Date.now()
    const status = await agent.status()
    const after = Date.now()
    expect(status.spool).toMatchObject({ punches: 3, chunks: 2, full: false })
    expect(status.spool.bytes).toBeGreaterThan(0)
    expect(status.spool.oldestUnsentAt).toBe(new Date(hourAgo).toISOString())
    expect(status.spool.oldestUnsentAgeSeconds).toBeGreaterThanOrEqual(Math.round((before - hourAgo) / 1000))
    expect(status.spool.oldestUnsentAgeSeconds).toBeLessThanOrEqual(Math.round((after - hourAgo) / 1000))
    expect(status.forwarding).toMatchObject({
      forwarded: 0,
      ratePerSecond: 0,
      lastSuccessAt: null,
      backlog: { peak: 3, remaining: 3, etaSeconds: null },
    })
    expect(status.forwarding.lastError?.message).toContain('ECONNREFUSED')
    expect(status.forwarding.lastError?.retryInMs).toBeGreaterThan(0)
    expect(status.alarms).toEqual([`cloud unreachable: ${status.forwarding.lastError?.message}`])
    // The failures show in the metrics too.
    const metrics = await agent.metrics()
    expect(metrics.get('hajri_agent_forward_failures_total')).toBeGreaterThanOrEqual(1)
    expect(metrics.get('hajri_agent_spool_punches')).toBe(3)
  })

  it('shows the backlog draining: its peak, what is left, and an estimate once punches flow', async () => {
    const relay = new GatedRelay(cloudUrl)
    await relay.start()
    cleanup.push(() => relay.stop())
    // One punch a chunk and a request, one request at a time: the relay lets them through one by
    // one. (By default consecutive chunks share a batch request, and all four would go in one.)
    const agent = await startAgent({
      cloudUrl: relay.url,
      spool: { chunkPunches: 1 },
      cloud: { batchSize: 1 },
    })
    await agent.input.send(
      'gate-1',
      [4, 3, 2, 1].map((m, i) => ({
        employeeCode: `E00${(i % 3) + 1}`,
        punchType: 'IN',
        punchedAt: recently(m).text,
      })),
    )
    expect((await agent.status()).forwarding.backlog).toEqual({ peak: 4, remaining: 4, etaSeconds: null })
    await relay.releaseOne()
    await until(async () => (await agent.status()).spool.punches === 3)
    const draining = await agent.status()
    expect(draining.forwarding.forwarded).toBe(1)
    expect(draining.forwarding.backlog).toMatchObject({ peak: 4, remaining: 3 })
    expect(draining.forwarding.ratePerSecond).toBeGreaterThan(0)
    expect(draining.forwarding.backlog?.etaSeconds).toBe(Math.round(3 / draining.forwarding.ratePerSecond))
    for (let i = 0; i < 3; i++) await relay.releaseOne()
    await until(async () => (await agent.status()).spool.punches === 0)
    expect((await agent.status()).forwarding).toMatchObject({ forwarded: 4, backlog: null })
  })

  // AgentStatus: backlog.peak is "how big it was at its largest". A backlog that built up and began
  // to drain before anyone asked for the status still had its largest size.
  it('counts the backlog peak from what was spooled, not from when the status was first read', async () => {
    const relay = new GatedRelay(cloudUrl)
    await relay.start()
    cleanup.push(() => relay.stop())
    // One punch a chunk and a request, so that two releases forward two of the four.
    const agent = await startAgent({
      cloudUrl: relay.url,
      spool: { chunkPunches: 1 },
      cloud: { batchSize: 1 },
    })
    await agent.input.send(
      'gate-1',
      [4, 3, 2, 1].map((m) => ({ employeeCode: 'E001', punchType: 'OUT', punchedAt: recently(m).text })),
    )
    await relay.releaseOne()
    await relay.releaseOne()
    await until(() => agent.gateway.spool.stats().items === 2)
    expect((await agent.status()).forwarding.backlog).toMatchObject({ peak: 4, remaining: 2 })
  })
})

describe('alarms', () => {
  it('raises one while the spool is full, and clears it once forwarding makes room', async () => {
    const relay = new GatedRelay(cloudUrl)
    await relay.start()
    cleanup.push(() => relay.stop())
    const agent = await startAgent({ cloudUrl: relay.url, spool: { maxBytes: 1 } })
    await agent.input.send('gate-1', { employeeCode: 'E001', punchType: 'IN', punchedAt: recently(2).text })
    // The spool holds its limit: the next punch is refused, so its device keeps it (no PUBACK).
    const refused = await agent.input
      .send('gate-1', { employeeCode: 'E002', punchType: 'IN', punchedAt: recently(1).text })
      .then(
        () => undefined,
        (err: Error) => err,
      )
    expect(refused?.name).toBe('SpoolFullError')
    const full = await agent.status()
    expect(full.spool).toMatchObject({ full: true, punches: 1 })
    expect(Date.parse(full.spool.fullSince ?? '')).not.toBeNaN()
    expect(full.alarms).toEqual([
      'spool full (the spool is full (spool.maxBytes)): MQTT and ADMS punches are being refused and ZK terminals are not read (devices keep them)',
    ])
    expect((await agent.metrics()).get('hajri_agent_spool_full')).toBe(1)
    const health = await (await fetch(`${agent.base}/healthz`)).json()
    expect(health).toEqual({ status: 'ok', alarms: full.alarms })

    await relay.releaseOne()
    await until(async () => !(await agent.status()).spool.full)
    const clear = await agent.status()
    expect(clear.spool).toMatchObject({ full: false, fullSince: null, punches: 0 })
    expect(clear.alarms).toEqual([])
    expect((await agent.metrics()).get('hajri_agent_spool_full')).toBe(0)
  })

  it('raises one for a corrupt spool chunk, quarantined while the rest is forwarded', async () => {
    const agent = await startAgent({
      beforeStart: async (dir) => {
        await mkdir(dir, { recursive: true })
        await writeFile(join(dir, 'chunk-0000000000000001-2.json'), '{"kind":"chunk","items":[{"trunc')
      },
    })
    await agent.input.send('gate-1', { employeeCode: 'E001', punchType: 'IN', punchedAt: recently(5).text })
    await until(async () => (await agent.status()).spool.quarantinedChunks === 1)
    // The forward is counted when the cloud answers, and the chunk deleted just after: wait for both.
    await until(async () => {
      const s = await agent.status()
      return s.forwarding.forwarded === 1 && s.spool.punches === 0
    })
    const status = await agent.status()
    expect(status.spool).toMatchObject({ punches: 0, quarantinedChunks: 1 })
    const quarantine = join(agent.config.spool.dir, 'quarantine')
    expect(status.alarms).toEqual([`1 corrupt spool chunk(s) quarantined in ${quarantine}`])
    // Kept for an operator, never deleted.
    expect(await readdir(quarantine)).toHaveLength(1)
  })

  it('raises one for a serial device that is waiting for its port, not for an MQTT device that left', async () => {
    const agent = await startAgent()
    const events = agent.input.context?.events
    events?.emit('deviceState', { deviceId: 'gate-1', state: 'disconnected' })
    events?.emit('deviceState', {
      deviceId: 'main-door',
      state: 'waiting',
      detail: 'cannot open /dev/ttyUSB9',
    })
    const status = await agent.status()
    expect(status.alarms).toEqual(['device main-door waiting: cannot open /dev/ttyUSB9'])
    expect(status.devices.find((d) => d.id === 'main-door')).toMatchObject({
      state: 'waiting',
      detail: 'cannot open /dev/ttyUSB9',
    })
    const metrics = await agent.metrics()
    expect(metrics.get('hajri_agent_device_up{device="main-door"}')).toBe(0)

    events?.emit('deviceState', { deviceId: 'main-door', state: 'connected' })
    events?.emit('deviceState', { deviceId: 'gate-1', state: 'connected' })
    expect((await agent.status()).alarms).toEqual([])
    const up = await agent.metrics()
    expect(up.get('hajri_agent_device_up{device="main-door"}')).toBe(1)
    expect(up.get('hajri_agent_device_up{device="gate-1"}')).toBe(1)
  })

  it('raises the cloud alarm when the cloud refuses the agent its credentials', async () => {
    const agent = await startAgent({ cloud: { clientSecret: 'hjs_wrong' } })
    await agent.input.send('gate-1', { employeeCode: 'E001', punchType: 'IN', punchedAt: recently(6).text })
    await until(async () => (await agent.status()).alarms.length > 0)
    expect((await agent.status()).alarms).toEqual([
      expect.stringMatching(/^cloud unreachable: the cloud refused a token \(invalid_client/),
    ])
    expect((await agent.status()).spool.punches).toBe(1)
  })

  it('clears the cloud alarm once the cloud answers again', async () => {
    const relay = new GatedRelay(cloudUrl)
    relay.mode = 'fail'
    await relay.start()
    cleanup.push(() => relay.stop())
    const agent = await startAgent({ cloudUrl: relay.url })
    await agent.input.send('gate-1', { employeeCode: 'E002', punchType: 'OUT', punchedAt: recently(6).text })
    await until(async () => (await agent.status()).alarms.length > 0)
    expect((await agent.status()).alarms).toEqual(['cloud unreachable: the cloud answered 503'])
    relay.mode = 'pass'
    await until(async () => (await agent.status()).spool.punches === 0)
    const status = await agent.status()
    expect(status.alarms).toEqual([])
    // The error is still shown, for the record; it is older than the last success.
    expect(status.forwarding.lastError?.message).toBe('the cloud answered 503')
    expect(status.forwarding.lastSuccessAt).not.toBeNull()
  })
})

describe('GET /metrics', () => {
  it('moves the hajri_agent_* metrics as punches go through', async () => {
    const agent = await startAgent()
    const before = await agent.metrics()
    expect(before.get('hajri_agent_punches_forwarded_total')).toBe(0)
    expect(before.get('hajri_agent_spool_punches')).toBe(0)
    await agent.input.send('gate-1', [
      { employeeCode: 'E001', punchType: 'IN', punchedAt: recently(8).text },
      { employeeCode: 'E002', punchType: 'IN', punchedAt: recently(8).text },
      { employeeCode: 'NOBODY', punchType: 'IN', punchedAt: recently(8).text },
    ])
    await agent.input.send('gate-1', '{"employeeCode": ')
    await until(async () => (await agent.status()).spool.punches === 0)
    const after = await agent.metrics()
    expect(after.get('hajri_agent_punches_spooled_total{device="gate-1"}')).toBe(3)
    expect(after.get('hajri_agent_frames_malformed_total{device="gate-1"}')).toBe(1)
    expect(after.get('hajri_agent_punches_forwarded_total')).toBe(2)
    expect(after.get('hajri_agent_dead_letters_added_total{reason="rejected_by_cloud"}')).toBe(1)
    expect(after.get('hajri_agent_dead_letters_added_total{reason="malformed_frame"}')).toBe(1)
    expect(after.get('hajri_agent_dead_letters')).toBe(2)
    expect(after.get('hajri_agent_spool_bytes')).toBe(0)
  })
})

describe('dead letters through the status listener', () => {
  const deadLetters = async (base: string) =>
    ((await (await fetch(`${base}/dead-letters`)).json()) as { data: Record<string, unknown>[] }).data
  /** A change: with the control token the agent keeps in its spool directory. */
  const replay = async (agent: { base: string; config: AgentConfig }, filter: object = {}) =>
    (await (
      await fetch(`${agent.base}/dead-letters/replay`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${(await readFile(join(agent.config.spool.dir, 'control-token'), 'utf8')).trim()}`,
        },
        body: JSON.stringify(filter),
      })
    ).json()) as { replayed: number; kept: number }

  it('parks a punch for an unknown employee, and replays it into the cloud once the employee exists', async () => {
    const agent = await startAgent()
    const code = `E9${Date.now() % 100_000}`
    await agent.input.send('gate-1', { employeeCode: code, punchType: 'IN', punchedAt: recently(10).text })
    // Parked when the cloud answers, and its chunk deleted just after: wait for both.
    await until(async () => {
      const s = await agent.status()
      return s.deadLetters.count === 1 && s.spool.punches === 0
    })
    const [parked] = await deadLetters(agent.base)
    expect(parked).toMatchObject({
      deviceId: 'gate-1',
      reason: 'rejected_by_cloud',
      punch: { employeeCode: code, punchType: 'IN' },
      problem: { code: 'employee_not_found', status: 422 },
    })
    const id = (parked?.punch as { id: string } | undefined)?.id ?? ''
    expect((await agent.status()).spool.punches).toBe(0)

    await cloud.upsertEmployees(tenantId, [employee(code)])
    expect(await replay(agent)).toEqual({ replayed: 1, kept: 0 })
    await until(async () => (await storedInCloud()).has(id))
    expect(await deadLetters(agent.base)).toEqual([])
    await until(async () => (await agent.status()).forwarding.forwarded === 1)
    expect((await agent.status()).deadLetters.count).toBe(0)
  })

  it('replays punches the cloud refused together, once their employees exist', async () => {
    // Two refused in one batch: their replay goes as one batch too, and both must be created.
    const agent = await startAgent()
    const codes = [`E8${Date.now() % 100_000}`, `E7${Date.now() % 100_000}`]
    await agent.input.send(
      'gate-1',
      codes.map((code) => ({ employeeCode: code, punchType: 'OUT', punchedAt: recently(11).text })),
    )
    await until(async () => (await agent.status()).deadLetters.count === 2)
    const ids = (await deadLetters(agent.base)).map((d) => (d.punch as { id: string }).id)
    await cloud.upsertEmployees(
      tenantId,
      codes.map((code) => employee(code)),
    )
    expect(await replay(agent)).toEqual({ replayed: 2, kept: 0 })
    await until(async () => (await agent.status()).spool.punches === 0)
    // Both are through: forwarded, or (if refused again) back in dead letters.
    await until(async () => {
      const status = await agent.status()
      return status.forwarding.forwarded + status.deadLetters.count === 2
    })
    expect(await deadLetters(agent.base)).toEqual([])
    const stored = await storedInCloud()
    expect(ids.filter((id) => stored.has(id))).toEqual(ids)
  })

  it('replays only the dead letters of the reason or device asked for', async () => {
    const agent = await startAgent()
    // A device clock from 2019, and a frame that cannot be read.
    await agent.input.send('gate-1', {
      employeeCode: 'E001',
      punchType: 'IN',
      punchedAt: '2019-06-01 09:00:00',
    })
    await agent.input.send('main-door', 'garbage', 'serial')
    expect((await agent.status()).deadLetters.count).toBe(2)
    expect(await replay(agent, { reason: 'status_unmapped' })).toEqual({ replayed: 0, kept: 2 })
    expect(await replay(agent, { deviceId: 'main-door' })).toEqual({ replayed: 0, kept: 2 })
    // The clock-invalid punch is replayable (an operator vouches for it); a raw frame is not.
    expect(await replay(agent, { reason: 'device_clock_invalid', deviceId: 'gate-1' })).toEqual({
      replayed: 1,
      kept: 1,
    })
    expect((await deadLetters(agent.base)).map((d) => d.reason)).toEqual(['malformed_frame'])
  })
})

describe('identity end to end', () => {
  it('stores a punch once in the cloud however often its device sends it', async () => {
    const agent = await startAgent()
    const first = recently(20)
    const second = recently(19)
    const attlog = (code: string, at: { text: string }) =>
      `${code}\t${at.text.slice(0, 19).replace('T', ' ')}\t0\t1\t0`
    await agent.input.send('main-door', attlog('E001', first), 'serial')
    await until(async () => (await agent.status()).forwarding.forwarded === 1)
    // The device sends its log again, with one new record.
    await agent.input.send('main-door', `${attlog('E001', first)}\r\n${attlog('E002', second)}`, 'serial')
    // The copy counts as forwarded: the cloud answers it as a duplicate.
    await until(async () => (await agent.status()).forwarding.forwarded === 3)
    const at = (p: { punchedAt: string }) => parseTimestamp(p.punchedAt)
    const stored = await cloudPunches()
    expect(stored.filter((p) => p.employeeCode === 'E001' && at(p) === first.micros)).toHaveLength(1)
    expect(stored.filter((p) => p.employeeCode === 'E002' && at(p) === second.micros)).toHaveLength(1)
    expect((await agent.status()).deadLetters.count).toBe(0)
  })

  it('stores a punch refused for an unknown employee when its device sends it again after the fix', async () => {
    // A batch where one punch is created and one refused; the employee is then added, and the
    // device sends the same log again (a new frame, a new chunk, the same punches). The cloud must
    // judge the punches afresh, not hand back its answer to the first batch.
    const agent = await startAgent()
    const code = `E6${Date.now() % 100_000}`
    const frame = [
      { employeeCode: 'E002', punchType: 'IN', punchedAt: recently(30).text },
      { employeeCode: code, punchType: 'IN', punchedAt: recently(30).text },
    ]
    await agent.input.send('gate-1', frame)
    await until(async () => (await agent.status()).deadLetters.count === 1)
    const {
      data: [refused],
    } = (await (await fetch(`${agent.base}/dead-letters`)).json()) as { data: { punch: { id: string } }[] }
    await cloud.upsertEmployees(tenantId, [employee(code)])
    await agent.input.send('gate-1', frame)
    await until(async () => (await agent.status()).spool.punches === 0)
    expect((await agent.status()).deadLetters.count).toBe(1)
    expect((await storedInCloud()).has(refused?.punch.id ?? '')).toBe(true)
  })
})

describe('start and stop', () => {
  it('stops its input and closes its status port on stop', async () => {
    const agent = await startAgent()
    expect(await listening(agent.base)).toBe(true)
    await agent.stop()
    expect(agent.input.running).toBe(false)
    expect(await listening(agent.base)).toBe(false)
  })

  it('stops while a request to the cloud hangs, without waiting for it to time out', async () => {
    // A cloud that takes connections and never answers; the agent's timeout is 5 minutes.
    const sockets = new Set<import('node:net').Socket>()
    const silent = createServer()
    silent.on('connection', (s) => sockets.add(s))
    silent.listen(0, '127.0.0.1')
    await once(silent, 'listening')
    cleanup.push(async () => {
      for (const s of sockets) s.destroy()
      silent.close()
    })
    let requests = 0
    silent.on('request', () => requests++)
    const agent = await startAgent({
      cloudUrl: `http://127.0.0.1:${(silent.address() as { port: number }).port}`,
      cloud: { timeoutSeconds: 300 },
    })
    await agent.input.send('gate-1', { employeeCode: 'E001', punchType: 'IN', punchedAt: recently(1).text })
    await until(() => requests > 0)
    // Stopping aborts what is in flight (the punches stay spooled). Waiting for the 5-minute
    // timeout instead would run into this test's own timeout.
    await agent.stop()
    expect(await listening(agent.base)).toBe(false)
  }, 10_000)

  it.each([
    ['after forwarding to the cloud', 'forwarded'],
    ['while retrying an unreachable cloud', 'retrying'],
  ])(
    'leaves nothing open: a process that started and stopped a gateway exits by itself (%s)',
    async (_what, mode) => {
      const dir = await mkdtemp(join(tmpdir(), 'hajri-gateway-exit-'))
      cleanup.push(() => rm(dir, { recursive: true, force: true }))
      const script = join(dir, 'run-gateway.mts')
      await writeFile(script, childScript(REPO_ROOT))
      const url = mode === 'forwarded' ? cloudUrl : `http://127.0.0.1:${await unusedPort()}`
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', script, url, clientId, join(dir, 'spool'), mode],
        {
          cwd: REPO_ROOT,
          env: { ...process.env, HAJRI_TEST_SECRET: clientSecret },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      )
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (c: Buffer) => {
        stdout += c.toString()
      })
      child.stderr.on('data', (c: Buffer) => {
        stderr += c.toString()
      })
      const [code] = (await once(child, 'exit')) as [number | null]
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
      const lines = stdout.trim().split('\n')
      expect(lines.at(-1)).toBe('stopped')
      const { status } = JSON.parse(lines[0] ?? '{}') as { status: string }
      expect(await listening(status)).toBe(false)
    },
    60_000,
  )
})

/**
 * A process that runs a gateway, has it take a punch, stops it, and then does nothing: it must exit
 * on its own. If something is left open, a watchdog (unref'd, so it keeps nothing alive itself)
 * names what and exits 9.
 */
function childScript(root: string): string {
  return `
import { createAgentLogger } from '${root}/agent/agent-logger.ts'
import { Gateway } from '${root}/agent/gateway.ts'

const [cloudUrl, clientId, spoolDir, mode] = process.argv.slice(2)
let context
const gateway = new Gateway(
  {
    site: { id: 'exit-test', timezone: 'Asia/Kolkata', clockFloor: '2020-01-01T00:00:00Z' },
    cloud: { url: cloudUrl, clientId, clientSecret: process.env.HAJRI_TEST_SECRET, scope: 'attendance:write',
      timeoutSeconds: 30, concurrency: 2, batchSize: 500 },
    spool: { dir: spoolDir, maxBytes: 1 << 30, chunkPunches: 500 },
    status: { listen: '127.0.0.1:0' },
    log: { level: 'silent' },
    devices: [{ id: 'gate-1', mqtt: { topic: 'punches/gate-1', format: 'json' } }],
  },
  { log: createAgentLogger({ level: 'silent', pretty: false }), createInputs: (c) => { context = c; return [] } },
)
await gateway.start()
await context.sink.accept('gate-1', 'mqtt', Buffer.from(JSON.stringify({ employeeCode: 'E001', punchType: 'OUT' })))
const sleep = () => new Promise((r) => setTimeout(r, 10))
if (mode === 'forwarded') while (gateway.spool.stats().items > 0) await sleep()
else while (gateway.tracker.forwardingStatus().lastError === null) await sleep()
// A client of the status listener, as \`hajri-agent status\` would be.
await (await fetch(gateway.statusAddress + '/status')).json()
process.stdout.write(JSON.stringify({ status: gateway.statusAddress }) + '\\n')
await gateway.stop()
process.stdout.write('stopped\\n')
setTimeout(() => {
  process.stderr.write('still running after stop: ' + JSON.stringify(process.getActiveResourcesInfo()) + '\\n')
  process.exit(9)
}, 20_000).unref()
`
}

describe('push terminals in status and metrics', () => {
  const cleanups: (() => Promise<unknown>)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  it("shows each terminal's health, raises an alarm for a nearly full one and for a stranger, and exports the figures", async () => {
    const agent = await startSimulatorTestAgent({
      adms: {},
      devices: [{ id: 'canteen-face', adms: { serialNumber: 'CJDE193560303' } }],
    })
    cleanups.push(() => agent.stop())
    const device = new AdmsDevice({
      url: agent.admsUrl as string,
      serialNumber: 'CJDE193560303',
      timeScale: 0.001,
      info: { attLogCapacity: 1000 },
    })
    cleanups.push(() => device.stop())
    await device.start()
    for (let i = 0; i < 850; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, k) => device.punch({ pin: `E${i + k}`, status: 0 })))
    }
    const stranger = new AdmsDevice({
      url: agent.admsUrl as string,
      serialNumber: 'STRANGER77',
      timeScale: 0.001,
    })
    await expect(stranger.start({ failFast: true })).rejects.toThrow()
    const terminal = () => agent.gateway.status().devices.find((d) => d.id === 'canteen-face')
    // The capacity comes with INFO's answer, the count with every poll after the last upload.
    const settled = () =>
      terminal()?.details?.counts.attendanceCapacity === 1000 &&
      terminal()?.details?.counts.attendanceRecords === 850
    for (let i = 0; i < 1000 && !settled(); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    const status = agent.gateway.status()
    expect(terminal()).toMatchObject({
      transports: ['adms'],
      state: 'connected',
      punches: 850,
      details: {
        protocol: 'adms',
        serialNumber: 'CJDE193560303',
        address: '127.0.0.1',
        recordsReceived: 850,
        counts: { attendanceRecords: 850, attendanceCapacity: 1000 },
        logUse: 0.85,
      },
    })
    expect(status.unknownDevices).toEqual([expect.objectContaining({ serialNumber: 'STRANGER77' })])
    expect(status.alarms).toEqual([
      'device canteen-face: its attendance log is 85% full (850 of 1000 records); a full terminal stops recording or overwrites its oldest records',
      expect.stringMatching(
        /^unknown terminal STRANGER77 at 127\.0\.0\.1 \(last request .*\) is refused: add a device/,
      ),
      expect.stringMatching(/^cloud unreachable/),
    ])
    const metrics = await (await fetch(`${agent.statusUrl}/metrics`)).text()
    expect(metrics).toMatch(/^hajri_agent_device_attendance_records\{device="canteen-face"\} 850$/m)
    expect(metrics).toMatch(/^hajri_agent_device_attendance_capacity\{device="canteen-face"\} 1000$/m)
    expect(metrics).toMatch(/^hajri_agent_device_records_received\{device="canteen-face"\} 850$/m)
    expect(metrics).toMatch(/^hajri_agent_unknown_devices 1$/m)
    expect(metrics).toMatch(/^hajri_agent_adms_requests_total\{route="upload",outcome="ok"\} \d+$/m)
    expect(metrics).toMatch(
      /^hajri_agent_adms_requests_total\{route="handshake",outcome="unknown_device"\} 1$/m,
    )
    // A serial number a stranger sent is never a label.
    expect(metrics).not.toContain('STRANGER77')
  })
})
