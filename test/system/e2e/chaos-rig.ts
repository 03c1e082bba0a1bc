/**
 * The system the chaos tests break: devices → the hajri-agent child → a
 * FaultProxy (the network) → the hajri-cloud child → a webhook receiver. The database is a fresh
 * SQLite file, or a PostgreSQL URL the test owns (private-postgres.ts). Set up through the cloud's
 * services in this process (tenant, employees, the agent's OAuth app, a read key, an endpoint
 * subscribed to attendance.punch.created); everything after that goes through the processes' own
 * interfaces. The agent runs with a small spool (spool.maxBytes, 1 MiB: the schema's least), so an
 * outage can fill it. HAJRI_E2E_KEEP=1 keeps the directory with every process's log and the spool.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { punchId } from '../../../agent/punch/punch-id.js'
import type { AgentStatus } from '../../../agent/status/agent-status.js'
import { type DatabaseHandle, openDatabase } from '../../../cloud/db/database.js'
import { migrateToLatest } from '../../../cloud/db/migrate.js'
import { MAX_RATE_LIMIT_PER_MINUTE } from '../../../cloud/features/bearer-auth/credential-settings.js'
import { createServices } from '../../../cloud/services.js'
import { DEFAULT_WEBHOOK_SETTINGS } from '../../../cloud/settings/webhook-settings.js'
import type { Punch } from '../../../shared/punch.js'
import { AgentProcess } from '../../support/agent-process.js'
import { employee, TEST_ACTOR, TEST_SECRET_KEY } from '../../support/cloud-harness.js'
import { CloudProcess } from '../../support/cloud-process.js'
import { agentStatus, freePort, waitFor } from '../../support/e2e-kit.js'
import { MqttPunchDevice } from '../../support/mqtt-punch-device.js'
import { type SocatPtyPair, startSocatPtyPair } from '../../support/socat-pty-pair.js'
import { WebhookReceiver } from '../../support/webhook-receiver.js'
import { AttlogSerialDevice } from './attlog-serial-device.js'
import { MQTT_DEVICE, SERIAL_DEVICE, writeChaosAgentConfig } from './chaos-agent-config.js'
import { FaultProxy } from './fault-proxy.js'
import type { SentPunch } from './judge-punch-webhooks.js'
import { SerialFeed } from './serial-feed.js'

export const PUNCH_CREATED = 'attendance.punch.created'

const HOOK_PATH = '/chaos'
const MQTT_PASSWORD = 'gate-1-secret'
const PUNCHES_PATH = '/api/public/v1/attendance/punches'
const HOUR_MS = 3600_000

export interface ChaosRigOptions {
  /** `sqlite` (a fresh file), or a PostgreSQL URL of a database the test owns. */
  database: 'sqlite' | { postgresUrl: string }
  /** A serial device on a socat pty pair beside the MQTT ones. */
  serial: boolean
  /** The steady MQTT device's pace: punches a tick (default 1 every 100 ms, ten a second). */
  steady?: { perTick: number; tickMs: number }
  random: () => number
}

export class ChaosRig {
  readonly receiver = new WebhookReceiver()
  dir = ''
  cloud: CloudProcess | undefined
  proxy: FaultProxy | undefined
  agent: AgentProcess | undefined
  /** The steady device, and the one that floods the spool (started only for that). */
  device: MqttPunchDevice | undefined
  burst: MqttPunchDevice | undefined
  serial: SerialFeed | undefined
  database: DatabaseHandle | undefined
  tenantId = ''
  endpoint = { id: '', secret: '' }
  readKey = ''
  statusPort = 0
  spoolDir = ''
  private mqttPort = 0
  private employeeCodes: string[] = []
  private pty: SocatPtyPair | undefined

  constructor(readonly options: ChaosRigOptions) {}

  async setUp(): Promise<void> {
    this.dir = await mkdtemp(join(tmpdir(), 'hajri-chaos-'))
    await this.receiver.start()
    const databaseUrl =
      this.options.database === 'sqlite'
        ? `sqlite:${join(this.dir, 'hajri.db')}`
        : this.options.database.postgresUrl
    const database = openDatabase(databaseUrl, { poolSize: 2, secretKey: TEST_SECRET_KEY })
    this.database = database
    await migrateToLatest(database.db)
    const services = createServices(database, {
      webhooks: { ...DEFAULT_WEBHOOK_SETTINGS, allowlist: ['127.0.0.1'] },
    })
    const { tenantId } = await services.tenants.create({
      name: 'Chaos',
      adminEmail: 'owner@chaos.example.test',
      backfillDays: 30,
    })
    this.tenantId = tenantId
    this.employeeCodes = Array.from({ length: 40 }, (_, i) => `E${String(i + 1).padStart(4, '0')}`)
    const serialCodes = Array.from({ length: 12 }, (_, i) => String(9001 + i))
    await services.employees.upsert(
      tenantId,
      [...this.employeeCodes, ...serialCodes].map((code) => employee(code)),
    )
    const created = await services.webhookEndpoints.create(
      tenantId,
      { url: this.receiver.url(HOOK_PATH), events: [PUNCH_CREATED], description: 'chaos' },
      TEST_ACTOR,
    )
    this.endpoint = { id: created.endpoint.id, secret: created.secret }
    this.receiver.verifyAt(HOOK_PATH, created.secret)
    const app = await services.oauthApps.create(
      tenantId,
      {
        name: 'hajri-agent chaos',
        scopes: ['attendance:write'],
        rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE,
      },
      TEST_ACTOR,
    )
    this.readKey = (
      await services.apiKeys.create(
        tenantId,
        { scopes: ['attendance:read'], rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE },
        TEST_ACTOR,
      )
    ).key

    // Every listener on a port of its own: freePort alone may pick one twice.
    const taken = new Set<number>()
    const port = async () => {
      for (;;) {
        const p = await freePort()
        if (!taken.has(p)) {
          taken.add(p)
          return p
        }
      }
    }
    const cloudPort = await port()
    this.mqttPort = await port()
    this.statusPort = await port()
    this.cloud = new CloudProcess({
      env: {
        HAJRI_DATABASE_URL: databaseUrl,
        HAJRI_HOST: '127.0.0.1',
        HAJRI_PORT: String(cloudPort),
        HAJRI_SECRET_KEY: TEST_SECRET_KEY,
        HAJRI_WEBHOOK_ALLOWLIST: '127.0.0.1',
        HAJRI_DATABASE_POOL_SIZE: '4',
        HAJRI_LOG_LEVEL: 'warn',
        // Retries within seconds, so the run does not wait on the production schedule's minutes.
        HAJRI_WEBHOOK_RETRY_SCHEDULE: '0,1,2,5,10,10,10,10',
        HAJRI_WEBHOOK_TIMEOUT_SECONDS: '5',
        HAJRI_WEBHOOK_CONCURRENCY: '8',
        HAJRI_WEBHOOK_ENDPOINT_CONCURRENCY: '4',
      },
      logPath: join(this.dir, 'cloud.log'),
    })
    await this.cloud.start(60_000)
    this.proxy = new FaultProxy({ host: '127.0.0.1', port: cloudPort }, this.options.random)
    await this.proxy.listen(await port())

    if (this.options.serial) this.pty = await startSocatPtyPair(this.dir)
    this.spoolDir = join(this.dir, 'spool')
    const configPath = join(this.dir, 'agent.yaml')
    await writeChaosAgentConfig(configPath, {
      cloudUrl: this.proxy.url,
      clientId: app.clientId,
      spoolDir: this.spoolDir,
      statusPort: this.statusPort,
      mqttPort: this.mqttPort,
      serialPath: this.pty?.devPath,
    })
    this.agent = new AgentProcess({
      configPath,
      env: { HAJRI_CHAOS_CLIENT_SECRET: app.clientSecret, HAJRI_CHAOS_MQTT_PASSWORD: MQTT_PASSWORD },
      logPath: join(this.dir, 'agent.log'),
    })
    await this.agent.start(60_000)

    const now = Math.floor(Date.now() / 1000) * 1000
    // Each device's punches in a time range of its own (whole seconds, in the tenant's backfill
    // window, never in the future), so no two punch ids meet by chance.
    const steady = this.options.steady ?? { perTick: 1, tickMs: 100 }
    this.device = this.mqttDevice('chaos-steady', now - 20 * HOUR_MS, {
      ...steady,
      maxOutstanding: Math.max(50, steady.perTick * 20),
    })
    this.burst = this.mqttDevice('chaos-burst', now - 25 * 24 * HOUR_MS, {
      perTick: 20,
      tickMs: 20,
      maxOutstanding: 400,
    })
    await waitFor(() => this.device?.connected && this.burst?.connected, 'the MQTT devices to connect')
    this.device.startStreaming()
    if (this.pty) {
      this.serial = new SerialFeed(
        new AttlogSerialDevice({
          hostPath: this.pty.hostPath,
          deviceId: SERIAL_DEVICE,
          employeeCodes: serialCodes,
          firstPunchMs: Math.floor(now / 60_000) * 60_000 - 5 * 24 * HOUR_MS,
        }),
        () => this.deviceStatus(SERIAL_DEVICE),
      )
      await this.serial.open()
      await this.serial.resume()
    }
  }

  private mqttDevice(
    clientId: string,
    firstPunchMs: number,
    pace: { perTick: number; tickMs: number; maxOutstanding: number },
  ): MqttPunchDevice {
    return new MqttPunchDevice({
      url: `mqtt://127.0.0.1:${this.mqttPort}`,
      clientId,
      username: MQTT_DEVICE,
      password: MQTT_PASSWORD,
      topic: `punches/${MQTT_DEVICE}`,
      employeeCodes: this.employeeCodes,
      firstPunchMs,
      ...pace,
    })
  }

  status(): Promise<AgentStatus | undefined> {
    return agentStatus(this.statusPort)
  }

  async deviceStatus(id: string) {
    return (await this.status())?.devices.find((d) => d.id === id)
  }

  /** SIGKILL, then a new agent process on the same configuration and spool, as after Restart=always. */
  async restartAgent(between?: () => Promise<void>): Promise<void> {
    const agent = this.agent as AgentProcess
    await this.serial?.pause()
    await agent.kill()
    await between?.()
    await agent.start(60_000)
    await this.serial?.agentRestarted()
  }

  /**
   * SIGKILL of the cloud the moment the next webhook reaches the receiver, which never answers it:
   * that attempt is in flight and its outcome never recorded, so the restarted cloud must send it
   * again, with the same webhook-id (at least once, docs/decisions/0020-webhook-outbox.md).
   */
  async killCloudOnNextWebhook(): Promise<void> {
    const cloud = this.cloud as CloudProcess
    let fired = false
    this.receiver.respondAt(HOOK_PATH, () => {
      if (!fired) {
        fired = true
        cloud.killNow()
      }
      return { hang: true }
    })
    try {
      await waitFor(() => fired, 'a webhook to arrive, to kill the cloud on', { intervalMs: 5 })
    } finally {
      this.receiver.respondAt(HOOK_PATH, { status: 204 })
    }
    await cloud.whenExited()
  }

  /** Punches acknowledged to their device: PUBACKed, or written on the serial line (and spooled). */
  acknowledged(): SentPunch[] {
    const mqtt = [this.device, this.burst].flatMap((device) =>
      (device?.punches ?? [])
        .filter((p) => p.acked)
        .map((p) => ({
          via: 'mqtt',
          deviceId: MQTT_DEVICE,
          employeeCode: p.employeeCode,
          punchType: p.punchType,
          punchedAtMs: p.punchedAtMs,
          externalId: punchId(MQTT_DEVICE, p.employeeCode, p.punchedAtMs * 1000, p.punchType),
        })),
    )
    return [...mqtt, ...(this.serial?.device.sent ?? [])]
  }

  /** Punches sent by the devices: MQTT publishes (acknowledged or not yet), serial lines written. */
  sentCount(): number {
    return (
      (this.device?.punches.length ?? 0) +
      (this.burst?.punches.length ?? 0) +
      (this.serial?.device.sent.length ?? 0)
    )
  }

  /** Rows in the cloud's punch log, counted in the database (cheap enough to poll). */
  async storedCount(): Promise<number> {
    const row = await (this.database as DatabaseHandle).db
      .selectFrom('punches')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', this.tenantId)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  /**
   * Waits until the cloud's punch log grows past `from` (by default, what it holds now): the
   * system carries punches again after a fault. Returns the new count.
   */
  async storedGrows(after: string, from?: number, timeoutMs = 120_000): Promise<number> {
    const before = from ?? (await this.storedCount())
    let now = before
    await waitFor(
      async () => {
        this.expectAlive()
        // The test's own connection may fail while PostgreSQL restarts: asked again at the next poll.
        now = await this.storedCount().catch(() => now)
        return now > before
      },
      `punches to reach the cloud again after ${after}`,
      { timeoutMs, intervalMs: 250, describe: () => ({ before, now }) },
    )
    return now
  }

  /**
   * The agent's retries of requests to the cloud, from its log (warnings, which AgentProcess does not
   * keep): how many, and the longest backoff it chose, which tells a stall after a fault that the
   * backoff explains from one it does not.
   */
  async agentRetries(): Promise<{ count: number; longestMs: number }> {
    const text = await readFile(join(this.dir, 'agent.log'), 'utf8').catch(() => '')
    let count = 0
    let longestMs = 0
    for (const line of text.split('\n')) {
      if (!line.includes('"forwarding failed; will retry"')) continue
      count++
      const retryInMs = Number(/"retryInMs":(\d+)/.exec(line)?.[1] ?? 0)
      longestMs = Math.max(longestMs, retryInMs)
    }
    return { count, longestMs }
  }

  /** Throws at once if the agent or the cloud exited on its own (a crash), with its last lines. */
  expectAlive(): void {
    for (const [name, exits] of [
      ['hajri-agent', this.agent?.unexpectedExits ?? []],
      ['hajri-cloud', this.cloud?.unexpectedExits ?? []],
    ] as const) {
      const exit = exits[0]
      if (exit)
        throw new Error(
          `${name} exited on its own (run ${exit.run}, code ${exit.code}, signal ${exit.signal}):\n${exit.tail.join('\n')}`,
        )
    }
  }

  /** Distinct webhook-ids the receiver got. */
  webhookIds(): Set<string> {
    return new Set(this.receiver.received.map((r) => String(r.headers['webhook-id'])))
  }

  /** The tenant's raw punch log through the public API (straight to the cloud, not the proxy). */
  async readPunchLog(): Promise<Punch[]> {
    const punches: Punch[] = []
    let cursor: string | null = null
    do {
      const query: string = `limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
      const response = await fetch(`${(this.cloud as CloudProcess).url}${PUNCHES_PATH}?${query}`, {
        headers: { authorization: `Bearer ${this.readKey}` },
        signal: AbortSignal.timeout(30_000),
      })
      if (response.status !== 200)
        throw new Error(`GET ${PUNCHES_PATH} answered ${response.status}: ${await response.text()}`)
      const page = (await response.json()) as { data: Punch[]; nextCursor: string | null }
      punches.push(...page.data)
      cursor = page.nextCursor
    } while (cursor)
    return punches
  }

  /**
   * The end of the load: the devices stop making punches and are acknowledged for every one they
   * made, the agent's spool drains into the cloud, and the cloud's webhooks catch up with its punch
   * log. Deadlines are generous (a PostgreSQL run waits out the leases of deliveries whose outcome a
   * restart cut off).
   */
  async settle(webhookTimeoutMs: number): Promise<AgentStatus> {
    this.device?.stopStreaming()
    this.burst?.stopStreaming()
    await this.serial?.pause()
    const devices = [this.device, this.burst]
    await waitFor(() => devices.every((d) => d?.outstanding === 0), 'every MQTT punch to be PUBACKed', {
      timeoutMs: 180_000,
      describe: () => devices.map((d) => ({ outstanding: d?.outstanding, connected: d?.connected })),
    })
    let last: AgentStatus | undefined
    const drained = await waitFor(
      async () => {
        this.expectAlive()
        last = await this.status()
        return last && last.spool.punches === 0 ? last : undefined
      },
      "the agent's spool to drain into the cloud",
      {
        timeoutMs: 180_000,
        intervalMs: 250,
        describe: () => last && { spool: last.spool, alarms: last.alarms },
      },
    )
    let stored = 0
    await waitFor(
      async () => {
        this.expectAlive()
        stored = await this.storedCount()
        return this.webhookIds().size >= stored
      },
      'a webhook for every stored punch',
      {
        timeoutMs: webhookTimeoutMs,
        intervalMs: 500,
        describe: () => ({
          stored,
          webhookIds: this.webhookIds().size,
          received: this.receiver.received.length,
        }),
      },
    )
    return drained
  }

  /** Everything goes, whatever state the test left it in. */
  async close(): Promise<void> {
    const steps: (() => Promise<unknown> | undefined)[] = [
      () => this.device?.end(),
      () => this.burst?.end(),
      () => this.serial?.close(),
      () => this.agent?.dispose(),
      () => this.cloud?.dispose(),
      () => this.proxy?.close(),
      () => this.pty?.stop(),
      () => this.receiver.stop(),
      () => this.database?.close(),
    ]
    const errors: unknown[] = []
    for (const step of steps) await Promise.resolve(step()).catch((err) => errors.push(err))
    if (process.env.HAJRI_E2E_KEEP === '1') console.warn(`HAJRI_E2E_KEEP=1: keeping ${this.dir}`)
    else if (this.dir) await rm(this.dir, { recursive: true, force: true })
    if (errors.length > 0) console.warn('cleanup problems:', errors)
  }
}
