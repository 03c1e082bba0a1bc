import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AgentConfigSchema } from '../../agent/config/schema.js'
import type { AgentStatus } from '../../agent/status/agent-status.js'
import { unusedPort } from '../support/unused-port.js'
import { readAgentBenchSettings } from './agent-bench-settings.js'
import { type AgentCloudDatabase, createAgentCloudDatabase } from './agent-cloud-database.js'
import { agentRuntime } from './agent-compile.js'
import { writeAgentConfig } from './agent-config.js'
import { clientCredentialsToken, type DirectBatchResult, postDirectBatches } from './agent-direct-batch.js'
import { cpuSeconds, memoryMB, requireProcfs } from './agent-proc-stats.js'
import { AgentProcess } from './agent-process.js'
import { benchEmployeeCodes, drainPunch, drainStart } from './agent-punch-data.js'
import { writeSpoolBacklog } from './agent-spool-writer.js'
import type { BenchContext, Benchmark } from './benchmark.js'
import { countPunches } from './count-punches.js'
import { summarizeCpuProfile } from './cpu-profile-summary.js'
import { fsyncLatencyMs } from './fsync-latency.js'
import { type BenchResult, ratio } from './report.js'
import { ServerProcess } from './server-process.js'

const EMPLOYEES = 1_000
const POLL_MS = 250
// The agent's shipped defaults, from the schema, so the baseline makes the requests the agent makes.
const CLOUD = AgentConfigSchema.properties.cloud.properties
const CONCURRENCY = CLOUD.concurrency.default as number
const BATCH_SIZE = CLOUD.batchSize.default as number
const CHUNK_PUNCHES = AgentConfigSchema.properties.spool.properties.chunkPunches.default as number
// Before the idle reference is read: V8's memory reducer shrinks the heap only well after startup's
// allocations stop (on the bench machine the idle agent held about 148 MB until some 28 s after
// start, then 100 MB from then on); the steady state is the reference.
const IDLE_SETTLE_MS = 35_000

interface Drain {
  /** From spawning the agent to GET /status showing an empty spool. */
  seconds: number
  startupSeconds: number
  /** VmHWM at the end: the highest RSS of the agent's life. */
  peakRssMB: number
  /** The highest VmRSS seen by polling (a check on VmHWM). */
  polledRssMB: number
  /** CPU seconds the agent used, all threads, from spawn to the empty spool. */
  cpuSeconds: number
  rssSamples: [number, number][]
  drained: boolean
  status: AgentStatus | undefined
  exit: { code: number | null; signal: NodeJS.Signals | null }
  warnings: { count: number; first: string | undefined }
  logTail: string
}

/** Starts the cloud on `database`, runs `body` against its URL, and stops it whatever happens. */
async function withCloud<T>(database: AgentCloudDatabase, body: (url: string) => Promise<T>): Promise<T> {
  const cloud = await ServerProcess.start({ entry: 'cloud-server.ts', args: [database.url] })
  try {
    return await body(cloud.url)
  } finally {
    await cloud.stop()
  }
}

/**
 * The agent's RSS with an empty spool, a reachable cloud and nothing to do: the reference its
 * peak during the drain is compared with, from the same code on the same machine.
 */
async function idleRss(options: Parameters<typeof AgentProcess.start>[0]): Promise<number> {
  const agent = await AgentProcess.start(options)
  try {
    await new Promise((resolve) => setTimeout(resolve, IDLE_SETTLE_MS))
    return memoryMB(agent.pid).rss
  } finally {
    await agent.stop()
  }
}

async function drain(
  options: Parameters<typeof AgentProcess.start>[0],
  count: number,
  log: (message: string) => void,
): Promise<Drain> {
  const timeoutMs = 60_000 + count // a generous millisecond a punch: a stuck drain ends, a slow one is timed
  const agent = await AgentProcess.start(options)
  const result: Drain = {
    seconds: Number.NaN,
    startupSeconds: (agent.readyAt - agent.spawnedAt) / 1000,
    peakRssMB: Number.NaN,
    polledRssMB: 0,
    cpuSeconds: Number.NaN,
    rssSamples: [],
    drained: false,
    status: undefined,
    exit: { code: null, signal: null },
    warnings: { count: 0, first: undefined },
    logTail: '',
  }
  try {
    let lastLog = performance.now()
    while (!agent.exited && performance.now() - agent.spawnedAt < timeoutMs) {
      const status = await agent.status()
      const now = performance.now()
      const { rss } = memoryMB(agent.pid)
      result.polledRssMB = Math.max(result.polledRssMB, rss)
      if (status.spool.punches === 0 && status.spool.chunks === 0) {
        result.seconds = (now - agent.spawnedAt) / 1000
        result.cpuSeconds = cpuSeconds(agent.pid)
        result.drained = true
        break
      }
      if (now - lastLog > 10_000) {
        lastLog = now
        result.rssSamples.push([Math.round((now - agent.spawnedAt) / 1000), Math.round(rss)])
        log(
          `${status.spool.punches} punches left, ${status.forwarding.ratePerSecond}/s, RSS ${rss.toFixed(0)} MB`,
        )
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    }
    if (!agent.exited) {
      result.peakRssMB = memoryMB(agent.pid).peak
      result.status = await agent.status()
    }
    result.warnings = agent.warnings()
  } finally {
    result.exit = await agent.stop()
    result.logTail = agent.logTail()
  }
  return result
}

async function run(context: BenchContext): Promise<BenchResult> {
  requireProcfs()
  const { settings, log } = context
  const agentSettings = readAgentBenchSettings()
  const { drainPunches: count, drainChunk, runtime } = agentSettings
  const chunkPunches = drainChunk ?? CHUNK_PUNCHES
  const startedAt = new Date()
  const profileName = 'agent-drain-agent'
  const profileDirectory = settings.cpuProfile
    ? join(context.resultsDirectory, 'profiles', profileName)
    : undefined
  if (profileDirectory) await rm(profileDirectory, { recursive: true, force: true })

  const codes = benchEmployeeCodes(EMPLOYEES)
  const start = drainStart(count)
  const punch = (i: number) => drainPunch(i, codes, start)
  const dir = await mkdtemp(join(tmpdir(), 'hajri-bench-agent-drain-'))
  const spoolDir = join(dir, 'spool')
  const problems: string[] = []
  let direct: DirectBatchResult | undefined
  let directStored = 0
  let agentStored = 0
  let idleRssMB = Number.NaN
  let spool: { chunks: number; bytes: number } | undefined
  let result: Drain | undefined
  let fsyncMs = Number.NaN
  let command = ''
  try {
    await mkdir(spoolDir)
    const { command: shown, ...runtimeOptions } = await agentRuntime(agentSettings, join(dir, 'build'))
    command = shown
    fsyncMs = fsyncLatencyMs(dir)
    // Baseline: the same punches posted straight to a cloud of its own (a fresh database, so neither
    // run meets the other's rows as duplicates).
    const baseDatabase = await createAgentCloudDatabase(EMPLOYEES)
    try {
      direct = await withCloud(baseDatabase, async (url) => {
        log(`posting ${count} punches directly, ${CONCURRENCY} requests of ${BATCH_SIZE} in flight`)
        const token = await clientCredentialsToken(url, baseDatabase.clientId, baseDatabase.clientSecret)
        return postDirectBatches({
          cloudUrl: url,
          token,
          count,
          batchSize: BATCH_SIZE,
          concurrency: CONCURRENCY,
          punch,
        })
      })
      directStored = countPunches(baseDatabase.path)
      log(`direct: ${(count / direct.seconds).toFixed(0)} punches/s`)
    } finally {
      await baseDatabase.remove()
    }

    const database = await createAgentCloudDatabase(EMPLOYEES)
    try {
      await withCloud(database, async (url) => {
        const [mqttPort, statusPort] = [await unusedPort(), await unusedPort()]
        const configPath = await writeAgentConfig({
          dir,
          spoolDir,
          cloudUrl: url,
          clientId: database.clientId,
          clientSecret: database.clientSecret,
          mqttPort,
          statusPort,
        })
        const options = { configPath, ...runtimeOptions, statusPort, logFile: join(dir, 'agent.log') }
        idleRssMB = await idleRss({ ...options, logFile: join(dir, 'agent-idle-reference.log') })
        log(`writing ${count} punches into the spool`)
        spool = await writeSpoolBacklog(spoolDir, count, chunkPunches, punch)
        log('draining')
        result = await drain({ ...options, profileDirectory }, count, log)
      })
      agentStored = countPunches(database.path)
    } finally {
      await database.remove()
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }

  if (direct) {
    if (direct.failures > 0)
      problems.push(`direct: ${direct.failures} failed batches; first: ${direct.firstFailure}`)
    if (direct.created !== count || direct.duplicate + direct.rejected > 0)
      problems.push(
        `direct: ${direct.created} created, ${direct.duplicate} duplicate, ${direct.rejected} rejected of ${count}`,
      )
    if (directStored !== count) problems.push(`direct: the cloud holds ${directStored} punches, not ${count}`)
  }
  if (result) {
    if (!result.drained)
      problems.push(
        `the agent did not empty its spool (${result.status?.spool.punches ?? '?'} punches left); log:\n${result.logTail}`,
      )
    const s = result.status
    if (s && s.deadLetters.count > 0) problems.push(`${s.deadLetters.count} punches went to dead letters`)
    if (s && s.spool.quarantinedChunks > 0) problems.push(`${s.spool.quarantinedChunks} chunks quarantined`)
    if (s && s.forwarding.forwarded !== count)
      problems.push(`the agent reports ${s.forwarding.forwarded} punches forwarded, not ${count}`)
    if (result.exit.code !== 0)
      problems.push(
        `the agent exited with code ${result.exit.code} (signal ${result.exit.signal}) on SIGTERM`,
      )
    if (agentStored !== count)
      problems.push(`the cloud holds ${agentStored} punches after the drain, not ${count}`)
  }

  const agentRate = result ? count / result.seconds : Number.NaN
  const directRate = direct ? count / direct.seconds : Number.NaN
  const notes = [
    `fsync (4 KiB write + fdatasync) in the temporary directory before the run: median ${fsyncMs.toFixed(2)} ms.`,
    `backlog: ${count} punches for ${EMPLOYEES} employees in ${spool?.chunks ?? '?'} chunk files ` +
      `(${((spool?.bytes ?? 0) / 1e6).toFixed(0)} MB).`,
    `direct: ${direct?.requests ?? '?'} requests, ${direct?.created ?? '?'} created in ${direct?.seconds.toFixed(1) ?? '?'} s; ` +
      `${directStored} punches in its database after.`,
    `agent: started (GET /status answering) in ${result?.startupSeconds.toFixed(1) ?? '?'} s of the ` +
      `${result?.seconds.toFixed(1) ?? '?'} s, using ${result?.cpuSeconds.toFixed(1) ?? '?'} CPU s (all threads; ` +
      `${result ? ((result.cpuSeconds / count) * 1e6).toFixed(0) : '?'} µs a punch, sharing the machine with the cloud); ` +
      `${agentStored} punches in the cloud after; highest polled RSS ` +
      `${result?.polledRssMB.toFixed(0) ?? '?'} MB; RSS every ~10 s [s, MB]: ${JSON.stringify(result?.rssSamples ?? [])}.`,
    ...(runtime === 'tsx'
      ? [
          "runtime tsx: tsx's module-hook thread and transformed sources count in both RSS figures; " +
            'the default, HAJRI_BENCH_AGENT_RUNTIME=compiled, measures the agent as installed (tsc output, plain node).',
        ]
      : []),
    `agent log: ${result?.warnings.count ?? '?'} lines at warn or above` +
      `${result?.warnings.first ? `; first: ${result.warnings.first}` : ''}.`,
  ]
  let profileSummary: string | undefined
  if (profileDirectory && result) profileSummary = await summarizeCpuProfile(profileDirectory, profileName)
  const label = count.toLocaleString('en-US')

  return {
    name: 'agent-drain',
    title: `Agent: draining a backlog of ${label} spooled punches`,
    method:
      `A spool directory filled with ${label} valid, distinct punches (chunk files of ${chunkPunches}, the ` +
      `spool's own format${chunkPunches === CHUNK_PUNCHES ? ', as full as chunks get' : ''}) for employees the cloud has; ` +
      'the cloud (cloud-server.ts: SQLite, a tenant, ' +
      `${EMPLOYEES} ACTIVE employees, an OAuth app at the highest rate limit) in a child process; then ` +
      `hajri-agent (${command}, default settings: ` +
      `${CONCURRENCY} requests of ${BATCH_SIZE} in flight) in a child process, timed from spawn until GET /status ` +
      "shows an empty spool; peak RSS is the agent's VmHWM (/proc) at that point. Baseline, first: the same " +
      'punches POSTed by this process straight to /punches/batch of a second cloud on a fresh database, with the ' +
      "agent's requests (same bodies, Idempotency-Key, bearer token, requests in flight). RSS reference: the same " +
      `agent idle with an empty spool, ${IDLE_SETTLE_MS / 1000} s after start. Both databases must hold every punch after.`,
    startedAt: startedAt.toISOString(),
    elapsedSeconds: (Date.now() - startedAt.getTime()) / 1000,
    figures: [
      {
        name: `drain ${label} punches: time`,
        value: { label: 'agent, spawn to empty spool', value: result?.seconds ?? Number.NaN, unit: 's' },
        goal: { of: 'value', op: '<=', target: 300 },
      },
      {
        name: 'drain rate',
        value: { label: 'agent', value: agentRate, unit: 'punches/s' },
        baseline: { label: 'direct POST /punches/batch', value: directRate, unit: 'punches/s' },
        ratio: ratio(agentRate, directRate),
      },
      {
        name: 'peak RSS while draining',
        value: { label: 'agent VmHWM', value: result?.peakRssMB ?? Number.NaN, unit: 'MB' },
        baseline: { label: 'agent idle, empty spool', value: idleRssMB, unit: 'MB' },
        ratio: ratio(result?.peakRssMB ?? Number.NaN, idleRssMB),
        goal: { of: 'value', op: '<=', target: 150 },
      },
    ],
    problems,
    notes,
    appendix:
      profileSummary &&
      `CPU profile of the agent while draining (this run's timings are perturbed by the profiler):\n\n${profileSummary}`,
    details: {
      count,
      chunkPunches,
      employees: EMPLOYEES,
      fsyncMs,
      direct,
      directStored,
      agentStored,
      idleRssMB,
      spool,
      drain: result && { ...result, logTail: undefined },
    },
  }
}

export const agentDrainBench: Benchmark = { name: 'agent-drain', run }
