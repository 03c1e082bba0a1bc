/**
 * The whole chain of the end-to-end tests, as real processes: a serial device (a socat pty
 * pair, ZKTeco ATTLOG lines) and an MQTT device (QoS 1 into the agent's embedded broker) → the
 * hajri-agent child → one or more `hajri-cloud serve` children (more than one: over one PostgreSQL
 * database, with Redis, behind a RoundRobinProxy) → a webhook receiver. The tenant, its employees,
 * the agent's OAuth app, API keys and a webhook endpoint subscribed to attendance.punch.created are
 * set up through the cloud's services, as the webhook tests do (webhook-fixture.ts); everything
 * after that goes through the processes' own interfaces. HAJRI_E2E_KEEP=1 keeps the directory with
 * every process's log.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { punchId } from '../../../agent/punch/punch-id.js'
import type { AgentStatus } from '../../../agent/status/agent-status.js'
import { MAX_RATE_LIMIT_PER_MINUTE } from '../../../cloud/features/bearer-auth/credential-settings.js'
import type { Punch } from '../../../shared/punch.js'
import { AgentProcess, writeAgentConfig } from '../../support/agent-process.js'
import { type DatabaseKind, employee, TEST_ACTOR } from '../../support/cloud-harness.js'
import { CloudProcess } from '../../support/cloud-process.js'
import { agentStatus, freePort, waitFor } from '../../support/e2e-kit.js'
import { MqttPunchDevice } from '../../support/mqtt-punch-device.js'
import { type SocatPtyPair, startSocatPtyPair } from '../../support/socat-pty-pair.js'
import { WebhookReceiver } from '../../support/webhook-receiver.js'
import { AttlogSerialDevice } from './attlog-serial-device.js'
import type { SentPunch } from './judge-punch-webhooks.js'
import { RoundRobinProxy } from './round-robin-proxy.js'
import { openWebhookFixture, readWebhookRecord, type WebhookFixture } from './webhook-fixture.js'

export const PUNCH_CREATED = 'attendance.punch.created'
export const MQTT_DEVICE = 'gate-1'
export const SERIAL_DEVICE = 'main-door'
const HOOK_PATH = '/punches'
const MQTT_PASSWORD = 'gate-1-secret'
const PUNCHES_PATH = '/api/public/v1/attendance/punches'

export interface RigOptions {
  kind: DatabaseKind
  /** Cloud instances over the one database; more than one are reached through a RoundRobinProxy. */
  instances: number
  /** HAJRI_REDIS_URL of every instance. */
  redisUrl?: string
  /** Employees punching on each device: codes of their own, so each punch tells where it came from. */
  mqttEmployees: number
  serialEmployees: number
}

export class DeviceToWebhookRig {
  readonly receiver = new WebhookReceiver()
  readonly clouds: CloudProcess[] = []
  /** deliveryId → the instances that logged delivering it ('webhook delivered', at debug). */
  readonly deliveredBy = new Map<string, number[]>()
  /** Each instance's pid, from its log lines. */
  readonly pids: (number | undefined)[] = []
  proxy: RoundRobinProxy | undefined
  agent: AgentProcess | undefined
  fixture: WebhookFixture | undefined
  endpoint = { id: '', secret: '' }
  /** attendance:read, used only for listing (its rate-limit counter tells whether instances share Redis). */
  readKey = { id: '', key: '' }
  /** attendance:write, for the punches the test posts itself. */
  writeKey = { id: '', key: '' }
  oauthApp = { id: '', clientId: '' }
  serialCodes: string[] = []
  dir = ''
  statusPort = 0
  private mqttPort = 0
  private pty: SocatPtyPair | undefined
  private device: MqttPunchDevice | undefined
  private serialDevice: AttlogSerialDevice | undefined

  constructor(readonly options: RigOptions) {}

  /** The one address of the cloud: the proxy, or the only instance. */
  get cloudUrl(): string {
    return this.proxy?.url ?? (this.clouds[0] as CloudProcess).url
  }

  get tenantId(): string {
    return (this.fixture as WebhookFixture).tenant.id
  }

  async setUp(): Promise<void> {
    const { options } = this
    this.dir = await mkdtemp(join(tmpdir(), 'hajri-e2e-device-to-webhook-'))
    await this.receiver.start()
    this.fixture = await openWebhookFixture(options.kind, {
      receiverUrl: (path) => this.receiver.url(path),
      endpointPaths: [],
      employees: options.mqttEmployees,
    })
    const { services } = this.fixture
    // ATTLOG PINs are numbers; the MQTT device's people are E0001... (webhook-fixture.ts).
    this.serialCodes = Array.from({ length: options.serialEmployees }, (_, i) => String(9001 + i))
    await services.employees.upsert(this.tenantId, [
      ...this.serialCodes.map((code) => employee(code)),
      ...['P001', 'P002', 'P003'].map((code) => employee(code)),
    ])
    const created = await services.webhookEndpoints.create(
      this.tenantId,
      { url: this.receiver.url(HOOK_PATH), events: [PUNCH_CREATED], description: 'e2e device to webhook' },
      TEST_ACTOR,
    )
    this.endpoint = { id: created.endpoint.id, secret: created.secret }
    const app = await services.oauthApps.create(
      this.tenantId,
      {
        name: 'hajri-agent e2e',
        scopes: ['attendance:write'],
        rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE,
      },
      TEST_ACTOR,
    )
    this.oauthApp = { id: app.id, clientId: app.clientId }
    const key = async (scope: 'attendance:read' | 'attendance:write') => {
      const k = await services.apiKeys.create(
        this.tenantId,
        { scopes: [scope], rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE },
        TEST_ACTOR,
      )
      return { id: k.id, key: k.key }
    }
    this.readKey = await key('attendance:read')
    this.writeKey = await key('attendance:write')
    this.pty = await startSocatPtyPair(this.dir)

    // Every listener of the rig on a port of its own: freePort alone may pick one twice.
    const taken = new Set<number>()
    const distinctPort = async () => {
      for (;;) {
        const port = await freePort()
        if (taken.has(port)) continue
        taken.add(port)
        return port
      }
    }
    const ports: number[] = []
    for (let i = 0; i < options.instances; i++) ports.push(await distinctPort())
    this.mqttPort = await distinctPort()
    this.statusPort = await distinctPort()
    if (options.instances > 1) {
      this.proxy = new RoundRobinProxy(ports.map((port) => ({ host: '127.0.0.1', port })))
      await this.proxy.listen()
    }
    for (const [i, port] of ports.entries()) {
      const cloud = new CloudProcess({
        env: {
          ...this.fixture.serveEnv,
          HAJRI_PORT: String(port),
          // 'webhook delivered' is a debug line: it says which instance sent what.
          HAJRI_LOG_LEVEL: 'debug',
          ...(options.redisUrl ? { HAJRI_REDIS_URL: options.redisUrl } : {}),
          // Behind the proxy: X-Forwarded-For from it is believed, and the issuer is its address.
          ...(this.proxy ? { HAJRI_TRUST_PROXY: '127.0.0.1', HAJRI_PUBLIC_URL: this.proxy.url } : {}),
        },
        logPath: join(this.dir, `cloud-${i + 1}.log`),
        onLogLine: (line) => {
          if (this.pids[i] === undefined && typeof line.pid === 'number') this.pids[i] = line.pid
          if (line.msg !== 'webhook delivered' || typeof line.deliveryId !== 'string') return
          this.deliveredBy.set(line.deliveryId, [...(this.deliveredBy.get(line.deliveryId) ?? []), i])
        },
      })
      this.clouds.push(cloud)
      cloud.spawn()
    }
    await Promise.all(this.clouds.map((cloud) => cloud.ready(60_000)))

    const configPath = join(this.dir, 'agent.yaml')
    await writeAgentConfig(configPath, {
      siteId: 'e2e-device-to-webhook',
      cloudUrl: this.cloudUrl,
      clientId: app.clientId,
      clientSecretEnv: 'HAJRI_E2E_CLIENT_SECRET',
      spoolDir: join(this.dir, 'spool'),
      chunkPunches: 20,
      concurrency: 2,
      timeoutSeconds: 15,
      statusPort: this.statusPort,
      mqtt: {
        port: this.mqttPort,
        username: MQTT_DEVICE,
        passwordEnv: 'HAJRI_E2E_MQTT_PASSWORD',
        topic: `punches/${MQTT_DEVICE}`,
        deviceId: MQTT_DEVICE,
      },
      serial: { path: this.pty.devPath, deviceId: SERIAL_DEVICE },
    })
    this.agent = new AgentProcess({
      configPath,
      env: { HAJRI_E2E_CLIENT_SECRET: app.clientSecret, HAJRI_E2E_MQTT_PASSWORD: MQTT_PASSWORD },
      logPath: join(this.dir, 'agent.log'),
    })
    await this.agent.start(60_000)
    await waitFor(
      async () => (await this.deviceStatus(SERIAL_DEVICE))?.state === 'connected',
      'the agent to open the serial port',
    )
  }

  async deviceStatus(id: string) {
    return (await agentStatus(this.statusPort))?.devices.find((d) => d.id === id)
  }

  /** The MQTT device publishes at least `count` punches (QoS 1) and is PUBACKed for each. */
  async runMqttDevice(count: number): Promise<{ sent: SentPunch[]; published: number }> {
    const device = new MqttPunchDevice({
      url: `mqtt://127.0.0.1:${this.mqttPort}`,
      clientId: 'e2e-gate-1',
      username: MQTT_DEVICE,
      password: MQTT_PASSWORD,
      topic: `punches/${MQTT_DEVICE}`,
      employeeCodes: (this.fixture as WebhookFixture).employeeCodes,
      // Whole seconds in the recent past: inside the tenant's backfill window, never "in the future".
      firstPunchMs: Math.floor(Date.now() / 1000) * 1000 - 20 * 3600_000,
      perTick: 2,
      tickMs: 10,
      maxOutstanding: 40,
    })
    this.device = device
    await waitFor(() => device.connections > 0, 'the MQTT device to connect', { timeoutMs: 30_000 })
    device.startStreaming()
    await waitFor(() => device.punches.length >= count, `${count} MQTT punches published`, { intervalMs: 5 })
    device.stopStreaming()
    await waitFor(() => device.outstanding === 0, 'every MQTT punch to be PUBACKed', {
      describe: () => ({ outstanding: device.outstanding, connected: device.connected }),
    })
    const sent = device.punches
      .filter((p) => p.acked)
      .map((p) => ({
        via: 'mqtt',
        deviceId: MQTT_DEVICE,
        employeeCode: p.employeeCode,
        punchType: p.punchType,
        punchedAtMs: p.punchedAtMs,
        externalId: punchId(MQTT_DEVICE, p.employeeCode, p.punchedAtMs * 1000, p.punchType),
      }))
    return { sent, published: device.punches.length }
  }

  /** The serial device writes `count` ATTLOG lines; returns once the agent has read them all. */
  async runSerialDevice(count: number): Promise<SentPunch[]> {
    const device = new AttlogSerialDevice({
      hostPath: (this.pty as SocatPtyPair).hostPath,
      deviceId: SERIAL_DEVICE,
      employeeCodes: this.serialCodes,
      firstPunchMs: Math.floor(Date.now() / 60_000) * 60_000 - 10 * 3600_000,
    })
    this.serialDevice = device
    await device.open()
    await device.write(count)
    await waitFor(
      async () => ((await this.deviceStatus(SERIAL_DEVICE))?.punches ?? 0) >= count,
      `the agent to read ${count} ATTLOG lines`,
    )
    return device.sent
  }

  /** The agent's spool is empty: every punch it took is in the cloud (or a dead letter). */
  async waitForAgentDrained(): Promise<AgentStatus> {
    let last: AgentStatus | undefined
    return waitFor(
      async () => {
        last = await agentStatus(this.statusPort)
        return last && last.spool.punches === 0 ? last : undefined
      },
      "the agent's spool to drain into the cloud",
      { describe: () => last && { spool: last.spool, forwarding: last.forwarding, alarms: last.alarms } },
    )
  }

  /** The database says `count` punch events were made and each delivered to the endpoint with success. */
  async waitForWebhooks(count: number) {
    const { db } = (this.fixture as WebhookFixture).database
    const read = async () => {
      const record = await readWebhookRecord(db, this.tenantId)
      const events = record.events.filter((e) => e.type === PUNCH_CREATED)
      const deliveries = record.deliveries.filter((d) => d.endpoint_id === this.endpoint.id)
      const succeeded = deliveries.filter((d) => d.status === 'succeeded')
      return { punches: record.punches, events, deliveries, succeeded, attempts: record.attempts }
    }
    let last: Awaited<ReturnType<typeof read>> | undefined
    return waitFor(
      async () => {
        last = await read()
        return last.events.length >= count && last.succeeded.length >= last.events.length ? last : undefined
      },
      `${count} ${PUNCH_CREATED} webhooks delivered`,
      {
        intervalMs: 200,
        describe: () =>
          last && {
            punches: last.punches,
            events: last.events.length,
            deliveries: last.deliveries.length,
            succeeded: last.succeeded.length,
            received: this.receiver.received.length,
          },
      },
    )
  }

  /** The tenant's raw punch log through the public API, page by page; each page's RateLimit-Remaining. */
  async readPunchLog(pageSize = 100): Promise<{ punches: Punch[]; remaining: number[] }> {
    const punches: Punch[] = []
    const remaining: number[] = []
    let cursor: string | null = null
    do {
      const query: string = `limit=${pageSize}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
      const response = await fetch(`${this.cloudUrl}${PUNCHES_PATH}?${query}`, {
        headers: { authorization: `Bearer ${this.readKey.key}` },
        signal: AbortSignal.timeout(15_000),
      })
      if (response.status !== 200)
        throw new Error(`GET ${PUNCHES_PATH} answered ${response.status}: ${await response.text()}`)
      remaining.push(Number(response.headers.get('ratelimit-remaining')))
      const page = (await response.json()) as { data: Punch[]; nextCursor: string | null }
      punches.push(...page.data)
      cursor = page.nextCursor
    } while (cursor)
    return { punches, remaining }
  }

  /** Posts one punch with the write key straight to one instance (not through the proxy). */
  async postPunch(instance: number, punch: SentPunch): Promise<Punch> {
    const cloud = this.clouds[instance] as CloudProcess
    const response = await fetch(`${cloud.url}${PUNCHES_PATH}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.writeKey.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        employeeCode: punch.employeeCode,
        punchType: punch.punchType,
        punchedAt: new Date(punch.punchedAtMs).toISOString(),
        deviceId: punch.deviceId,
        source: 'e2e-test',
        externalId: punch.externalId,
      }),
      signal: AbortSignal.timeout(15_000),
    })
    if (response.status !== 201)
      throw new Error(`POST ${PUNCHES_PATH} answered ${response.status}: ${await response.text()}`)
    return (await response.json()) as Punch
  }

  /** The instances whose log says they sent the delivery of event `webhookId` (waits for the line). */
  async sendersOf(webhookId: string): Promise<number[]> {
    const { db } = (this.fixture as WebhookFixture).database
    const row = await db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('tenant_id', '=', this.tenantId)
      .where('event_id', '=', webhookId)
      .executeTakeFirstOrThrow()
    return waitFor(() => this.deliveredBy.get(row.id), `the log line of delivery ${row.id}`)
  }

  /** SIGSTOP (or SIGCONT) every instance but `except`: frozen, it can neither claim nor send. */
  signalOthers(except: number, signal: 'SIGSTOP' | 'SIGCONT'): void {
    for (const [i, pid] of this.pids.entries()) {
      if (i === except) continue
      if (pid === undefined) throw new Error(`no pid seen in the log of cloud instance ${i + 1}`)
      process.kill(pid, signal)
    }
  }

  /** SIGCONT to every instance still running (a test that failed mid-probe left some frozen). */
  resumeAll(): void {
    for (const [i, pid] of this.pids.entries()) {
      if (pid !== undefined && this.clouds[i]?.alive) process.kill(pid, 'SIGCONT')
    }
  }

  /** SIGTERM to the agent, then to every instance: their exit codes (0 for a clean stop). */
  async stopAll(): Promise<{ agent: number | null; clouds: (number | null)[] }> {
    const agent = (await this.agent?.stop()) ?? null
    const clouds = await Promise.all(this.clouds.map((cloud) => cloud.stop()))
    return { agent, clouds }
  }

  /** Everything goes, whatever state the test left it in. */
  async close(): Promise<void> {
    const steps: (() => Promise<unknown> | undefined)[] = [
      () => this.device?.end(),
      () => this.serialDevice?.close(),
      () => this.agent?.dispose(),
      async () => this.resumeAll(),
      () => Promise.all(this.clouds.map((cloud) => cloud.dispose())),
      () => this.proxy?.close(),
      () => this.pty?.stop(),
      () => this.receiver.stop(),
      () => this.fixture?.close(),
      () => this.deleteRedisCounters(),
    ]
    const errors: unknown[] = []
    for (const step of steps) await Promise.resolve(step()).catch((err) => errors.push(err))
    if (process.env.HAJRI_E2E_KEEP === '1') console.warn(`HAJRI_E2E_KEEP=1: keeping ${this.dir}`)
    else if (this.dir) await rm(this.dir, { recursive: true, force: true })
    if (errors.length > 0) console.warn('cleanup problems:', errors)
  }

  /** The rate-limit counters of this run's credentials (they would expire within the minute anyway). */
  private async deleteRedisCounters(): Promise<void> {
    if (!this.options.redisUrl || !this.oauthApp.id) return
    const { Redis } = await import('ioredis')
    const redis = new Redis(this.options.redisUrl, { maxRetriesPerRequest: 1 })
    try {
      const keys = [
        `hajri-rl-api:key:${this.readKey.id}`,
        `hajri-rl-api:key:${this.writeKey.id}`,
        `hajri-rl-api:app:${this.oauthApp.id}`,
        ...(await redis.keys(`hajri-rl-oauth:*${this.oauthApp.clientId}`)),
      ]
      await redis.del(...keys)
    } finally {
      redis.disconnect()
    }
  }
}
