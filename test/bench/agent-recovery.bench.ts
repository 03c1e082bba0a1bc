import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connectAsync, type MqttClient } from 'mqtt'
import { unusedPort } from '../support/unused-port.js'
import { readAgentBenchSettings } from './agent-bench-settings.js'
import { createAgentCloudDatabase } from './agent-cloud-database.js'
import { agentRuntime } from './agent-compile.js'
import { BENCH_TOPIC, writeAgentConfig } from './agent-config.js'
import { AgentProcess } from './agent-process.js'
import { benchEmployeeCodes, mqttPunchPayloads } from './agent-punch-data.js'
import type { BenchContext, Benchmark } from './benchmark.js'
import { countPunches } from './count-punches.js'
import { type BenchResult, ratio } from './report.js'
import { ServerProcess } from './server-process.js'

const EMPLOYEES = 100
/** How long the cloud is away: the outage Node-RED and the agent were compared on. */
const OUTAGE_MS = 30_000
/** Punches keep arriving meanwhile, at about a gate's pace. */
const PUNCH_EVERY_MS = 500
const POLL_MS = 25
const WAIT_LIMIT_MS = 10 * 60_000

/**
 * A fixed loopback port in front of the cloud process, as a site's cloud URL stays the same while
 * the cloud behind it restarts (a new cloud-server process listens on a new ephemeral port). While
 * closed it refuses connections and drops the open ones, as a stopped host does.
 */
class StableAddress {
  private server: Server | undefined
  private readonly sockets = new Set<Socket>()
  constructor(readonly port: number) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`
  }

  async open(target: string): Promise<void> {
    const { hostname, port } = new URL(target)
    const server = createServer((client) => {
      const upstream = tcpConnect(Number(port), hostname)
      for (const socket of [client, upstream]) {
        this.sockets.add(socket)
        socket.on('close', () => this.sockets.delete(socket))
        socket.on('error', () => {
          client.destroy()
          upstream.destroy()
        })
      }
      client.pipe(upstream).pipe(client)
    })
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve))
    this.server = server
  }

  async close(): Promise<void> {
    const server = this.server
    this.server = undefined
    for (const socket of this.sockets) socket.destroy()
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

async function until(what: string, condition: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + WAIT_LIMIT_MS
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`gave up waiting: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}

async function run(context: BenchContext): Promise<BenchResult> {
  const { log } = context
  const agentSettings = readAgentBenchSettings()
  const startedAt = new Date()
  const dir = await mkdtemp(join(tmpdir(), 'hajri-bench-agent-recovery-'))
  const spoolDir = join(dir, 'spool')
  const problems: string[] = []
  const notes: string[] = []
  let baselineSeconds = Number.NaN
  let recoverySeconds = Number.NaN
  let published = 0
  let stored = 0
  let command = ''
  const database = await createAgentCloudDatabase(EMPLOYEES)
  let cloud: ServerProcess | undefined
  let agent: AgentProcess | undefined
  let mqtt: MqttClient | undefined
  const address = new StableAddress(await unusedPort())
  try {
    await mkdir(spoolDir)
    const { command: shown, ...runtimeOptions } = await agentRuntime(agentSettings, join(dir, 'build'))
    command = shown
    cloud = await ServerProcess.start({ entry: 'cloud-server.ts', args: [database.url] })
    await address.open(cloud.url)
    const [mqttPort, statusPort] = [await unusedPort(), await unusedPort()]
    const configPath = await writeAgentConfig({
      dir,
      spoolDir,
      cloudUrl: address.url,
      clientId: database.clientId,
      clientSecret: database.clientSecret,
      mqttPort,
      statusPort,
    })
    agent = await AgentProcess.start({
      configPath,
      ...runtimeOptions,
      statusPort,
      logFile: join(dir, 'agent.log'),
    })
    const running = agent
    mqtt = await connectAsync(`mqtt://127.0.0.1:${mqttPort}`, { reconnectPeriod: 0 })
    const client = mqtt
    const payloads = mqttPunchPayloads(benchEmployeeCodes(EMPLOYEES))
    const publish = async () => {
      await client.publishAsync(BENCH_TOPIC, payloads(), { qos: 1 })
      published++
    }
    const forwarded = async () => (await running.status()).forwarding.forwarded

    // Baseline: a punch to a fresh agent whose cloud is up, from its PUBACK to the cloud accepting it
    // (the token request included, as after the outage).
    let t0 = performance.now()
    await publish()
    await until('the first punch forwarded', async () => (await forwarded()) >= 1)
    baselineSeconds = (performance.now() - t0) / 1000
    log(`baseline: first batch accepted ${baselineSeconds.toFixed(2)} s after the punch`)

    // The outage: the cloud process stops, punches keep arriving, the agent backs off.
    await address.close()
    await cloud.stop()
    cloud = undefined
    log(`cloud stopped for ${OUTAGE_MS / 1000} s; punches keep arriving`)
    const outageEnds = performance.now() + OUTAGE_MS
    while (performance.now() < outageEnds) {
      await publish()
      await new Promise((resolve) => setTimeout(resolve, PUNCH_EVERY_MS))
    }
    const before = await forwarded()
    const status = await running.status()
    notes.push(
      `during the outage: ${published - 1} punches published, the agent's last error: ` +
        `${status.forwarding.lastError?.message ?? 'none'} (retry in ${status.forwarding.lastError?.retryInMs ?? '?'} ms).`,
    )
    cloud = await ServerProcess.start({ entry: 'cloud-server.ts', args: [database.url] })
    await address.open(cloud.url)
    t0 = performance.now()
    log('cloud back')
    await until('a batch accepted after the outage', async () => (await forwarded()) > before)
    recoverySeconds = (performance.now() - t0) / 1000
    log(`first batch accepted ${recoverySeconds.toFixed(2)} s after the cloud's return`)
    await until('the spool emptied', async () => {
      const s = await running.status()
      return s.spool.punches === 0 && s.spool.chunks === 0
    })
    const final = await running.status()
    if (final.forwarding.forwarded !== published)
      problems.push(`the agent reports ${final.forwarding.forwarded} punches forwarded, not ${published}`)
    if (final.deadLetters.count > 0) problems.push(`${final.deadLetters.count} punches went to dead letters`)
  } finally {
    await mqtt?.endAsync().catch(() => undefined)
    const exit = await agent?.stop()
    if (exit && exit.code !== 0) problems.push(`the agent exited with code ${exit.code} on SIGTERM`)
    await address.close()
    await cloud?.stop()
    try {
      stored = countPunches(database.path)
    } finally {
      await database.remove()
      await rm(dir, { recursive: true, force: true })
    }
  }
  if (stored !== published) problems.push(`the cloud holds ${stored} punches, not the ${published} published`)
  notes.push(`${published} punches published, ${stored} in the cloud after.`)

  return {
    name: 'agent-recovery',
    title: `Agent: resuming after a ${OUTAGE_MS / 1000}-second cloud outage`,
    method:
      `hajri-agent (${command}, default settings) in a child process, its cloud URL a fixed loopback port ` +
      'relayed to the cloud (cloud-server.ts: SQLite, a tenant, an OAuth app) in a child process. One MQTT ' +
      `punch; then the cloud process is stopped (the port refuses connections) for ${OUTAGE_MS / 1000} s while ` +
      `a punch arrives every ${PUNCH_EVERY_MS} ms; then a new cloud process on the same database, and the ` +
      "port relays to it again. Measured by polling GET /status every 25 ms: from the cloud's return to the " +
      "first batch accepted. Baseline, same run, same agent: from the first punch's PUBACK to its acceptance " +
      'by a cloud that is up. Every published punch must be in the cloud after.',
    startedAt: startedAt.toISOString(),
    elapsedSeconds: (Date.now() - startedAt.getTime()) / 1000,
    figures: [
      {
        name: 'resuming after the outage',
        value: { label: "cloud's return to first accepted batch", value: recoverySeconds, unit: 's' },
        baseline: { label: 'first batch, cloud up', value: baselineSeconds, unit: 's' },
        ratio: ratio(recoverySeconds, baselineSeconds),
        goal: { of: 'value', op: '<=', target: 5 },
      },
    ],
    problems,
    notes,
    details: { outageMs: OUTAGE_MS, published, stored, baselineSeconds, recoverySeconds },
  }
}

export const agentRecoveryBench: Benchmark = { name: 'agent-recovery', run }
