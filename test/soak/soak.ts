/**
 * `npm run soak`: a bounded soak (about 10 minutes, kept out of the default npm test run, run by
 * npm run soak and by CI) under steady load, in which memory, open handles and spool size stay
 * flat. Runs the rig of soak-rig.ts for HAJRI_SOAK_SECONDS, samples both processes every
 * ~10 s, stops the load, and judges: resources flat (flatness.ts), the spool drained within a
 * minute, no punch lost or stored twice, no 5xx, every punch told by a verified webhook, no crash.
 * Prints a table, writes bench/results/soak.json, and exits 1 on any failure.
 */
import { fileURLToPath } from 'node:url'
import { sleep, waitFor } from '../support/e2e-kit.js'
import { type Bound, judge, type Point } from './flatness.js'
import { directorySize, fileSize, type ProcessSample, probeProcess } from './process-probe.js'
import { type Check, type MetricReport, soakTable, writeSoakResult } from './soak-report.js'
import { DEVICE_ID, SoakRig } from './soak-rig.js'
import { readSoakSettings } from './soak-settings.js'

const settings = readSoakSettings()
const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url))
/** The spool returns to ~0 within a minute of the load stopping. */
const DRAIN_SECONDS = 60
/** Webhooks trail the punches; they are given this long after the spool drained. */
const WEBHOOK_SECONDS = 180
const MB = 1e6
/** eventLoopMonitoringPrecision of the agent's metrics (agent/status/metrics.ts). */
const AGENT_LOOP_PRECISION_MS = 1000

interface Sample {
  /** Seconds since the load started. */
  t: number
  phase: 'load' | 'after'
  agent: ProcessSample & { loopLagP99Ms: number }
  cloud: ProcessSample
  spool: { punches: number; bytes: number; diskMB: number; diskFiles: number }
  database: { mb: number; walMB: number }
  counts: { published: number; acked: number; webhooks: number; reads: number }
}

interface Metric {
  name: string
  unit: string
  bound: Bound
  value: (s: Sample) => number
}

// The bounds, stated in the output (flatness.ts says how each is judged). Memory: its floor +25%
// between the thirds (not counting a few MB of noise), or a trend past the hourly figure that the
// thirds confirm; counts: a few descriptors or handles more; the spool: bounded, then drained.
const memory = (floor: number, maxPerHour: number): Bound => ({
  kind: 'memory',
  maxGrowth: 0.25,
  floor,
  maxPerHour,
})
const count: Bound = { kind: 'count', maxIncrease: 10 }
const METRICS: Metric[] = [
  { name: 'agent RSS', unit: 'MB', bound: memory(8, 100), value: (s) => s.agent.rssMB },
  { name: 'agent heap used', unit: 'MB', bound: memory(4, 60), value: (s) => s.agent.heapUsedMB },
  { name: 'agent open fds', unit: 'fds', bound: count, value: (s) => s.agent.fds },
  { name: 'agent sockets', unit: 'fds', bound: count, value: (s) => s.agent.sockets },
  { name: 'agent libuv handles', unit: 'handles', bound: count, value: (s) => s.agent.handles },
  {
    name: 'agent event-loop lag p99',
    unit: 'ms',
    bound: { kind: 'report' },
    value: (s) => s.agent.loopLagP99Ms,
  },
  { name: 'cloud RSS', unit: 'MB', bound: memory(8, 100), value: (s) => s.cloud.rssMB },
  { name: 'cloud heap used', unit: 'MB', bound: memory(4, 60), value: (s) => s.cloud.heapUsedMB },
  { name: 'cloud open fds', unit: 'fds', bound: count, value: (s) => s.cloud.fds },
  { name: 'cloud sockets', unit: 'fds', bound: count, value: (s) => s.cloud.sockets },
  { name: 'cloud libuv handles', unit: 'handles', bound: count, value: (s) => s.cloud.handles },
  {
    name: 'spool depth',
    unit: 'punches',
    bound: { kind: 'backlog', factor: 1.5, slack: Math.ceil(settings.rate * 2) },
    value: (s) => s.spool.punches,
  },
  {
    name: 'spool held (status)',
    unit: 'kB',
    bound: { kind: 'backlog', factor: 1.5, slack: 1024 },
    value: (s) => s.spool.bytes / 1000,
  },
  {
    name: 'spool on disk',
    unit: 'MB',
    bound: { kind: 'backlog', factor: 1.5, slack: 1 },
    value: (s) => s.spool.diskMB,
  },
  { name: 'cloud database', unit: 'MB', bound: { kind: 'report' }, value: (s) => s.database.mb },
  { name: 'cloud WAL', unit: 'MB', bound: { kind: 'report' }, value: (s) => s.database.walMB },
]

const log = (message: string) => process.stderr.write(`[soak] ${message}\n`)

async function takeSample(rig: SoakRig, t: number, phase: Sample['phase']): Promise<Sample> {
  const agentPid = rig.agentPid
  const cloudPid = rig.cloudPid
  if (agentPid === undefined || cloudPid === undefined) throw new Error('a process of the soak has no pid')
  const [agent, cloud, status, metrics, spoolDisk, dbBytes, walBytes] = await Promise.all([
    probeProcess(agentPid, rig.reportDirs.agent),
    probeProcess(cloudPid, rig.reportDirs.cloud),
    rig.status(),
    rig.agentMetrics(),
    directorySize(rig.spoolDir),
    fileSize(rig.databasePath),
    fileSize(`${rig.databasePath}-wal`),
  ])
  const device = rig.device
  return {
    t,
    phase,
    agent: {
      ...agent,
      // Node's delay histogram records whole timer intervals, and the agent samples once a second
      // (agent/status/metrics.ts): the lag is what exceeds that second. NaN until the first second.
      loopLagP99Ms: Math.max(
        0,
        (metrics.hajri_agent_nodejs_eventloop_lag_p99_seconds ?? Number.NaN) * 1000 - AGENT_LOOP_PRECISION_MS,
      ),
    },
    cloud,
    spool: {
      punches: status?.spool.punches ?? Number.NaN,
      bytes: status?.spool.bytes ?? Number.NaN,
      diskMB: spoolDisk.bytes / MB,
      diskFiles: spoolDisk.files,
    },
    database: { mb: dbBytes / MB, walMB: walBytes / MB },
    counts: {
      published: device?.punches.length ?? 0,
      acked: device ? device.punches.length - device.outstanding : 0,
      webhooks: rig.receiver.received.length,
      reads: rig.reader?.counts.requests ?? 0,
    },
  }
}

/** Samples every `sampleSeconds` (on a fixed schedule) until stopped. */
class Sampler {
  readonly samples: Sample[] = []
  phase: Sample['phase'] = 'load'
  error: Error | undefined
  private stopped = false
  private loop: Promise<void> | undefined

  constructor(
    private readonly rig: SoakRig,
    private readonly startedAt: number,
  ) {}

  start(): void {
    this.loop ??= (async () => {
      for (let n = 0; !this.stopped; n++) {
        const due = this.startedAt + n * settings.sampleSeconds * 1000
        await sleep(Math.max(0, due - Date.now()))
        if (this.stopped) break
        try {
          const sample = await takeSample(this.rig, (Date.now() - this.startedAt) / 1000, this.phase)
          this.samples.push(sample)
          if (sample.phase === 'load' && this.samples.length % 6 === 1) {
            log(
              `t=${Math.round(sample.t)}s agent ${sample.agent.rssMB.toFixed(0)} MB, cloud ${sample.cloud.rssMB.toFixed(0)} MB, spool ${sample.spool.punches}, acked ${sample.counts.acked}, webhooks ${sample.counts.webhooks}`,
            )
          }
        } catch (err) {
          this.error = err as Error
          return
        }
      }
    })()
  }

  async stop(): Promise<void> {
    this.stopped = true
    await this.loop
  }
}

async function main(): Promise<number> {
  // Resident memory and descriptors come from /proc.
  if (process.platform !== 'linux') throw new Error(`the soak reads /proc (Linux), not ${process.platform}`)
  const startedAt = new Date()
  const rig = new SoakRig(settings)
  const checks: Check[] = []
  const notes: string[] = []
  let sampler: Sampler | undefined
  try {
    log(
      `setting up (${settings.seconds} s of load at ${settings.rate} punches/s, a sample every ${settings.sampleSeconds} s)`,
    )
    await rig.setUp()
    const loadStart = Date.now()
    sampler = new Sampler(rig, loadStart)
    rig.startLoad()
    sampler.start()
    await sleep(settings.seconds * 1000)
    if (sampler.error) throw sampler.error

    // The load stops; the spool must drain, and the webhooks follow.
    const stopAt = Date.now()
    await rig.stopLoad()
    sampler.phase = 'after'
    let drainSeconds: number | undefined
    try {
      await waitFor(async () => (await rig.status())?.spool.punches === 0, 'the spool to drain', {
        timeoutMs: DRAIN_SECONDS * 1000 - (Date.now() - stopAt),
        intervalMs: 200,
      })
      drainSeconds = (Date.now() - stopAt) / 1000
    } catch {
      // Reported below.
    }
    const status = await rig.status()
    checks.push({
      name: 'spool drained after the load',
      ok: drainSeconds !== undefined,
      detail:
        drainSeconds !== undefined
          ? `empty ${drainSeconds.toFixed(1)} s after the load stopped (bound ${DRAIN_SECONDS} s); ${status?.spool.bytes ?? '?'} bytes held`
          : `${status?.spool.punches ?? '?'} punches still spooled ${DRAIN_SECONDS} s after the load stopped`,
    })

    const stored = await rig.readPunchLog()
    const acked = rig.ackedExternalIds()
    const published = rig.device?.punches.length ?? 0
    const storedIds = new Map<string, number>()
    for (const p of stored)
      if (p.externalId) storedIds.set(p.externalId, (storedIds.get(p.externalId) ?? 0) + 1)
    const lost = acked.filter((id) => !storedIds.has(id))
    const duplicated = [...storedIds].filter(([, n]) => n > 1).map(([id]) => id)
    const ackedSet = new Set(acked)
    const strangers = stored.filter(
      (p) => !p.externalId || !ackedSet.has(p.externalId) || p.deviceId !== DEVICE_ID,
    )
    checks.push({
      name: 'no punch lost',
      ok: lost.length === 0 && acked.length > 0,
      detail: `published ${published}, PUBACKed ${acked.length}, stored ${stored.length}, lost ${lost.length}${lost.length ? ` (e.g. ${lost.slice(0, 3).join(', ')})` : ''}`,
    })
    checks.push({
      name: 'no punch stored twice or made up',
      ok: duplicated.length === 0 && strangers.length === 0,
      detail: `duplicated ${duplicated.length}, not sent ${strangers.length}`,
    })

    let webhookSeconds: number | undefined
    const webhookStart = Date.now()
    try {
      await waitFor(
        () => {
          const told = rig.webhooks().punchIds
          return stored.every((p) => told.has(p.id))
        },
        'a webhook for every stored punch',
        { timeoutMs: WEBHOOK_SECONDS * 1000, intervalMs: 500 },
      )
      webhookSeconds = (Date.now() - webhookStart) / 1000
    } catch {
      // Reported below.
    }
    const hooks = rig.webhooks()
    const untold = stored.filter((p) => !hooks.punchIds.has(p.id)).length
    checks.push({
      name: 'webhooks: every punch delivered, signed',
      ok: untold === 0 && hooks.verified === hooks.received,
      detail: `${hooks.received} received, ${hooks.verified} verified (standardwebhooks), ${hooks.punchIds.size} punches told, ${untold} untold${webhookSeconds !== undefined ? `, the last ${webhookSeconds.toFixed(1)} s after the drain` : ''}; ${hooks.repeated} redelivered`,
    })
    // One more sample once everything has settled, then the processes stop.
    await sleep(settings.sampleSeconds * 1000)
    await sampler.stop()
    if (sampler.error) throw sampler.error

    const reader = rig.reader?.counts
    const read5xx = Object.entries(reader?.byStatus ?? {}).filter(([s]) => Number(s) >= 500)
    const readOther = Object.entries(reader?.byStatus ?? {}).filter(([s]) => s !== '200')
    const cloud5xx = Object.entries(rig.cloudResponses).filter(([s]) => Number(s) >= 500)
    checks.push({
      name: 'no 5xx',
      ok: read5xx.length === 0 && cloud5xx.length === 0,
      detail: `cloud answers by status ${JSON.stringify(rig.cloudResponses)}`,
    })
    checks.push({
      name: 'API reads all answered 200',
      ok: (reader?.requests ?? 0) > 0 && readOther.length === 0 && (reader?.failures ?? 1) === 0,
      detail: `${reader?.requests ?? 0} reads, by status ${JSON.stringify(reader?.byStatus ?? {})}, ${reader?.failures ?? 0} unanswered${reader?.samples.length ? `; ${reader.samples.join(' | ')}` : ''}`,
    })
    checks.push({
      name: 'no dead letter',
      ok: status?.deadLetters.count === 0,
      detail: `${status?.deadLetters.count ?? '?'} dead letters`,
    })
    const exits = [...(rig.agent?.unexpectedExits ?? []), ...(rig.cloud?.unexpectedExits ?? [])]
    const errors = [...(rig.agent?.errors ?? []), ...(rig.cloud?.errors ?? [])]
    checks.push({
      name: 'no crash, no error logged',
      ok: exits.length === 0 && errors.length === 0,
      detail: `${exits.length} unexpected exits, ${errors.length} error lines${errors[0] ? ` (first: ${String(errors[0].msg)})` : ''}`,
    })
    const stops = await rig.stopProcesses()
    checks.push({
      name: 'clean stop (SIGTERM)',
      ok: stops.agent === 0 && stops.cloud === 0,
      detail: `agent exit ${stops.agent}, cloud exit ${stops.cloud}`,
    })

    const samples = sampler.samples
    const loadSamples = samples.filter((s) => s.phase === 'load')
    const afterSample = samples.at(-1)
    const metrics: MetricReport[] = METRICS.map((m) => {
      const points: Point[] = loadSamples.map((s) => ({ t: s.t, value: m.value(s) }))
      return {
        name: m.name,
        unit: m.unit,
        bound: m.bound,
        judgement: judge(points, settings.seconds, settings.warmupShare, m.bound, m.unit),
        after: afterSample ? m.value(afterSample) : Number.NaN,
      }
    })
    const elapsedSeconds = (Date.now() - startedAt.getTime()) / 1000
    const lastHandles = loadSamples.at(-1)
    notes.push(
      `${settings.seconds} s of load at ${settings.rate} punches/s (MQTT QoS 1, embedded broker), API reads every 250 ms, a webhook per punch; warm-up ${Math.round(settings.warmupShare * 100)}% left out of the judgement.`,
      `libuv handles at the end of the load: agent ${JSON.stringify(lastHandles?.agent.handlesByType ?? {})}, cloud ${JSON.stringify(lastHandles?.cloud.handlesByType ?? {})}.`,
    )
    process.stdout.write(`${soakTable(metrics, checks, loadSamples.length)}\n`)
    const path = await writeSoakResult(RESULTS, {
      startedAt,
      elapsedSeconds,
      method:
        'hajri-cloud (SQLite) and hajri-agent as child processes under steady load: an MQTT device publishing punches, an HR backend reading the public API, a webhook receiver. RSS and open fds from /proc, V8 heap (after a full collection) and libuv handles from a Node diagnostic report (SIGUSR2), spool depth from the agent status, sampled at a fixed interval. Flat: the last third of the load against the second third (medians) and a Theil–Sen trend, after the warm-up.',
      metrics,
      checks,
      notes,
      details: { settings, samples },
    })
    log(`results in ${path}; took ${elapsedSeconds.toFixed(0)} s`)
    const failed = metrics.some((m) => !m.judgement.ok) || checks.some((c) => !c.ok)
    return failed ? 1 : 0
  } finally {
    await sampler?.stop()
    await rig.close()
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error('soak broke:', err)
    process.exit(1)
  },
)
