/**
 * What the soak runs: `hajri-cloud serve` over SQLite in a temporary directory, the
 * hajri-agent with its embedded broker, a webhook receiver subscribed to every punch, an MQTT
 * device publishing at a steady rate, and an HR backend reading the public API. Both products run
 * as real child processes, each able to collect its garbage and write a Node diagnostic report on
 * SIGUSR2 (process-probe.ts).
 * The tenant, its employees and credentials are made through the cloud's services before the cloud
 * starts; everything after goes through the processes' own interfaces.
 */
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { punchId } from '../../agent/punch/punch-id.js'
import { openDatabase } from '../../cloud/db/database.js'
import { migrateToLatest } from '../../cloud/db/migrate.js'
import { MAX_RATE_LIMIT_PER_MINUTE } from '../../cloud/features/bearer-auth/credential-settings.js'
import { createServices } from '../../cloud/services.js'
import { DEFAULT_WEBHOOK_SETTINGS } from '../../cloud/settings/webhook-settings.js'
import type { Punch } from '../../shared/punch.js'
import { AgentProcess, writeAgentConfig } from '../support/agent-process.js'
import { CloudProcess } from '../support/cloud-process.js'
import { agentStatus, freePort, waitFor } from '../support/e2e-kit.js'
import { MqttPunchDevice } from '../support/mqtt-punch-device.js'
import { WebhookReceiver } from '../support/webhook-receiver.js'
import { ApiReader } from './api-reader.js'
import { reportEnv } from './process-probe.js'
import type { SoakSettings } from './soak-settings.js'

export const DEVICE_ID = 'gate-1'
const HOOK_PATH = '/punches'
const PUNCH_CREATED = 'attendance.punch.created'

export class SoakRig {
  readonly receiver = new WebhookReceiver()
  dir = ''
  cloud: CloudProcess | undefined
  agent: AgentProcess | undefined
  device: MqttPunchDevice | undefined
  reader: ApiReader | undefined
  cloudPid: number | undefined
  statusPort = 0
  databasePath = ''
  spoolDir = ''
  reportDirs = { agent: '', cloud: '' }
  endpointSecret = ''
  readKey = ''
  /** Answers the cloud logged, by status ('request completed' lines, pino level info). */
  readonly cloudResponses: Record<string, number> = {}
  private firstPunchMs = 0

  constructor(private readonly settings: SoakSettings) {}

  async setUp(): Promise<void> {
    const { settings } = this
    this.dir = await mkdtemp(join(tmpdir(), 'hajri-soak-'))
    this.reportDirs = { agent: join(this.dir, 'reports-agent'), cloud: join(this.dir, 'reports-cloud') }
    await mkdir(this.reportDirs.agent)
    await mkdir(this.reportDirs.cloud)
    await this.receiver.start()

    this.databasePath = join(this.dir, 'cloud', 'hajri.db')
    const databaseUrl = `sqlite:${this.databasePath}`
    const secretKey = randomBytes(32).toString('base64')
    const database = openDatabase(databaseUrl, { secretKey })
    let agentApp: { clientId: string; clientSecret: string }
    try {
      await migrateToLatest(database.db)
      const services = createServices(database, {
        webhooks: { ...DEFAULT_WEBHOOK_SETTINGS, allowlist: ['127.0.0.1'] },
      })
      const actor = { name: 'soak:setup', ip: null }
      const { tenantId } = await services.tenants.create({
        name: 'Soak',
        adminEmail: 'owner@soak.example.test',
        backfillDays: 30,
      })
      const codes = Array.from({ length: settings.employees }, (_, i) => `E${String(i + 1).padStart(5, '0')}`)
      await services.employees.upsert(
        tenantId,
        codes.map((code) => ({
          employeeCode: code,
          name: `Employee ${code}`,
          email: `${code.toLowerCase()}@soak.example.test`,
          department: 'Assembly',
          location: 'Pune',
          status: 'ACTIVE' as const,
        })),
      )
      const endpoint = await services.webhookEndpoints.create(
        tenantId,
        { url: this.receiver.url(HOOK_PATH), events: [PUNCH_CREATED], description: 'soak receiver' },
        actor,
      )
      this.endpointSecret = endpoint.secret
      this.receiver.verifyAt(HOOK_PATH, endpoint.secret)
      const app = await services.oauthApps.create(
        tenantId,
        {
          name: 'hajri-agent soak',
          scopes: ['attendance:write'],
          rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE,
        },
        actor,
      )
      agentApp = { clientId: app.clientId, clientSecret: app.clientSecret }
      this.readKey = (
        await services.apiKeys.create(
          tenantId,
          { scopes: ['employees:read', 'attendance:read'], rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE },
          actor,
        )
      ).key
      this.employeeCodes = codes
    } finally {
      // The cloud child is the only one to use the database from here on.
      await database.close()
    }

    const taken = new Set<number>()
    const distinctPort = async () => {
      for (;;) {
        const port = await freePort()
        if (!taken.has(port)) {
          taken.add(port)
          return port
        }
      }
    }
    const cloudPort = await distinctPort()
    const mqttPort = await distinctPort()
    this.statusPort = await distinctPort()

    this.cloud = new CloudProcess({
      env: {
        HAJRI_DATABASE_URL: databaseUrl,
        HAJRI_HOST: '127.0.0.1',
        HAJRI_PORT: String(cloudPort),
        HAJRI_SECRET_KEY: secretKey,
        HAJRI_WEBHOOK_ALLOWLIST: '127.0.0.1',
        // As deployed: info logs every request (and so the soak counts every answer's status).
        HAJRI_LOG_LEVEL: 'info',
        ...reportEnv(this.reportDirs.cloud),
      },
      logPath: join(this.dir, 'cloud.log'),
      onLogLine: (line) => {
        if (this.cloudPid === undefined && typeof line.pid === 'number') this.cloudPid = line.pid
        const status = (line.res as { statusCode?: unknown } | undefined)?.statusCode
        if (line.msg === 'request completed' && typeof status === 'number') {
          this.cloudResponses[status] = (this.cloudResponses[status] ?? 0) + 1
        }
      },
    })
    await this.cloud.start(60_000)
    await waitFor(() => this.cloudPid, "the cloud's pid in its log")

    this.spoolDir = join(this.dir, 'spool')
    const configPath = join(this.dir, 'agent.yaml')
    const mqttPassword = randomBytes(12).toString('hex')
    await writeAgentConfig(configPath, {
      siteId: 'soak',
      cloudUrl: this.cloud.url,
      clientId: agentApp.clientId,
      clientSecretEnv: 'HAJRI_SOAK_CLIENT_SECRET',
      spoolDir: this.spoolDir,
      chunkPunches: 500,
      concurrency: 2,
      timeoutSeconds: 15,
      statusPort: this.statusPort,
      mqtt: {
        port: mqttPort,
        username: DEVICE_ID,
        passwordEnv: 'HAJRI_SOAK_MQTT_PASSWORD',
        topic: `punches/${DEVICE_ID}`,
        deviceId: DEVICE_ID,
      },
    })
    this.agent = new AgentProcess({
      configPath,
      env: {
        HAJRI_SOAK_CLIENT_SECRET: agentApp.clientSecret,
        HAJRI_SOAK_MQTT_PASSWORD: mqttPassword,
        ...reportEnv(this.reportDirs.agent),
      },
      logPath: join(this.dir, 'agent.log'),
    })
    await this.agent.start(60_000)

    // One punch a second of device time, from far enough back that the last is still in the past,
    // and within the tenant's 30-day backfill window.
    const punches = Math.ceil(settings.rate * settings.seconds * 1.2)
    this.firstPunchMs = Math.floor(Date.now() / 1000) * 1000 - (punches + 3600) * 1000
    const perTick = Math.max(1, Math.round(settings.rate / 20))
    this.device = new MqttPunchDevice({
      url: `mqtt://127.0.0.1:${mqttPort}`,
      clientId: 'soak-gate-1',
      username: DEVICE_ID,
      password: mqttPassword,
      topic: `punches/${DEVICE_ID}`,
      employeeCodes: this.employeeCodes,
      firstPunchMs: this.firstPunchMs,
      perTick,
      tickMs: Math.round((1000 * perTick) / settings.rate),
      maxOutstanding: Math.max(50, settings.rate * 2),
    })
    const device = this.device
    await waitFor(() => device.connections > 0, 'the MQTT device to connect', { timeoutMs: 30_000 })
    this.reader = new ApiReader({
      baseUrl: this.cloud.url,
      apiKey: this.readKey,
      intervalMs: 250,
      punchPages: 3,
      recentFrom: () => {
        const latest = this.firstPunchMs + Math.max(device.punches.length - 60 * settings.rate, 0) * 1000
        return new Date(latest).toISOString()
      },
    })
  }

  employeeCodes: string[] = []

  get agentPid(): number | undefined {
    return this.agent?.pid
  }

  /** Steady load: the device publishes, the reader reads; webhooks follow from the cloud. */
  startLoad(): void {
    this.device?.startStreaming()
    this.reader?.start()
  }

  /** Stops the device (every publish PUBACKed) and the reader. */
  async stopLoad(): Promise<void> {
    const device = this.device as MqttPunchDevice
    device.stopStreaming()
    await waitFor(() => device.outstanding === 0, 'every MQTT punch to be PUBACKed', { timeoutMs: 120_000 })
    await this.reader?.stop()
  }

  async status() {
    return agentStatus(this.statusPort)
  }

  /** The agent's own Prometheus figures, by metric name (labels dropped, first value kept). */
  async agentMetrics(): Promise<Record<string, number>> {
    try {
      const response = await fetch(`http://127.0.0.1:${this.statusPort}/metrics`, {
        signal: AbortSignal.timeout(5000),
      })
      const out: Record<string, number> = {}
      for (const line of (await response.text()).split('\n')) {
        if (line.startsWith('#') || line === '') continue
        const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})?\s+(\S+)$/.exec(line)
        if (match && !((match[1] as string) in out)) out[match[1] as string] = Number(match[2])
      }
      return out
    } catch {
      return {}
    }
  }

  /** The externalId the agent gives each punch the device had PUBACKed
   * (docs/decisions/0025-punch-id.md).
   */
  ackedExternalIds(): string[] {
    return (this.device?.punches ?? [])
      .filter((p) => p.acked)
      .map((p) => punchId(DEVICE_ID, p.employeeCode, p.punchedAtMs * 1000, p.punchType))
  }

  /** The tenant's raw punch log as the public API lists it. */
  async readPunchLog(): Promise<Punch[]> {
    const punches: Punch[] = []
    let cursor: string | null = null
    do {
      const query: string = `limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
      const response = await fetch(`${this.cloud?.url}/api/public/v1/attendance/punches?${query}`, {
        headers: { authorization: `Bearer ${this.readKey}` },
        signal: AbortSignal.timeout(30_000),
      })
      if (response.status !== 200) {
        throw new Error(`listing punches answered ${response.status}: ${await response.text()}`)
      }
      const page = (await response.json()) as { data: Punch[]; nextCursor: string | null }
      punches.push(...page.data)
      cursor = page.nextCursor
    } while (cursor)
    return punches
  }

  /** Deliveries to the receiver whose signature verified, and the punch ids they told of. */
  webhooks() {
    const received = this.receiver.to(HOOK_PATH)
    const verified = received.filter((r) => r.verifiedWith.length > 0)
    const punchIds = new Set<string>()
    const webhookIds = new Set<string>()
    let repeated = 0
    for (const r of verified) {
      const id = r.json?.data?.id
      if (r.json?.type === PUNCH_CREATED && typeof id === 'string') punchIds.add(id)
      const webhookId = String(r.headers['webhook-id'])
      if (webhookIds.has(webhookId)) repeated++
      webhookIds.add(webhookId)
    }
    return { received: received.length, verified: verified.length, punchIds, repeated }
  }

  /** SIGTERM to the agent, then the cloud: their exit codes (0 is a clean stop). */
  async stopProcesses(): Promise<{ agent: number | null; cloud: number | null }> {
    await this.device?.end()
    const agent = (await this.agent?.stop()) ?? null
    const cloud = (await this.cloud?.stop()) ?? null
    return { agent, cloud }
  }

  /** Everything goes, whatever state the run left it in. */
  async close(): Promise<void> {
    const steps: (() => Promise<unknown> | undefined)[] = [
      () => this.device?.end(),
      () => this.reader?.stop(),
      () => this.agent?.dispose(),
      () => this.cloud?.dispose(),
      () => this.receiver.stop(),
    ]
    for (const step of steps) await Promise.resolve(step()).catch(() => {})
    if (this.settings.keep) console.warn(`HAJRI_SOAK_KEEP=1: keeping ${this.dir}`)
    else if (this.dir) await rm(this.dir, { recursive: true, force: true })
  }
}
