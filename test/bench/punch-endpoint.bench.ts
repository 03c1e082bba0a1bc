import { rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { createBenchDatabase } from './bench-database.js'
import type { BenchContext, Benchmark } from './benchmark.js'
import { countPunches } from './count-punches.js'
import { summarizeCpuProfile } from './cpu-profile-summary.js'
import { fsyncLatencyMs, fsyncNote } from './fsync-latency.js'
import { createPunchGenerator } from './punch-generator.js'
import { type BenchResult, ratio } from './report.js'
import { type LoadResult, runLoad } from './run-load.js'
import { ServerProcess } from './server-process.js'

const PATH = '/api/public/v1/attendance/punches'
const EMPLOYEES = 500
// Enough concurrent clients to keep one server core busy; the same for the baseline.
const CONNECTIONS = 32

interface Totals {
  ok: number
  non2xx: number
  errors: number
  seconds: number
  okPerSecond: number
  /** The worst round's p99: one slow round is something a client would have seen. */
  p99Ms: number
  p50Ms: number
}

function totals(runs: readonly LoadResult[]): Totals {
  const sum = (f: (r: LoadResult) => number) => runs.reduce((acc, r) => acc + f(r), 0)
  const ok = sum((r) => r.ok)
  const seconds = sum((r) => r.seconds)
  return {
    ok,
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors + r.timeouts),
    seconds,
    okPerSecond: ok / seconds,
    p99Ms: Math.max(...runs.map((r) => r.latencyMs.p99)),
    p50Ms: Math.max(...runs.map((r) => r.latencyMs.p50)),
  }
}

async function run(context: BenchContext): Promise<BenchResult> {
  const { settings, log } = context
  const startedAt = new Date()
  const database = await createBenchDatabase(EMPLOYEES)
  const profileName = 'punch-endpoint-server'
  const profileDirectory = settings.cpuProfile
    ? join(context.resultsDirectory, 'profiles', profileName)
    : undefined
  // Profiles of an earlier run would be mistaken for this one's.
  if (profileDirectory) await rm(profileDirectory, { recursive: true, force: true })
  const problems: string[] = []
  const notes: string[] = []
  const bareRuns: LoadResult[] = []
  const cloudRuns: LoadResult[] = []
  let cloudWarmupOk = 0
  let stored = 0
  let fsyncBeforeMs = Number.NaN
  let fsyncAfterMs = Number.NaN
  try {
    const bare = await ServerProcess.start({ entry: 'bare-server.ts' })
    let cloud: ServerProcess | undefined
    try {
      cloud = await ServerProcess.start({ entry: 'cloud-server.ts', args: [database.url], profileDirectory })
      // Both servers get the same stream of distinct, valid punches and the same client settings.
      const nextPunch = createPunchGenerator(database.employeeCodes)
      const load = (server: ServerProcess, seconds: number) =>
        runLoad({
          url: `${server.url}${PATH}`,
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${database.apiKey}` },
          connections: CONNECTIONS,
          seconds,
          nextBody: () => JSON.stringify(nextPunch()),
        })
      log(`warming up both servers for ${settings.warmupSeconds} s each`)
      fsyncBeforeMs = fsyncLatencyMs(dirname(database.path))
      await load(bare, settings.warmupSeconds)
      cloudWarmupOk = (await load(cloud, settings.warmupSeconds)).ok
      for (let round = 0; round < settings.rounds; round++) {
        // ABBA order: a machine getting busier or quieter through the run weighs on both alike.
        const order = round % 2 === 0 ? [bare, cloud] : [cloud, bare]
        for (const server of order) {
          const result = await load(server, settings.seconds)
          ;(server === bare ? bareRuns : cloudRuns).push(result)
          log(
            `round ${round + 1} ${server === bare ? 'bare fastify' : 'punch endpoint'}: ` +
              `${result.okPerSecond.toFixed(0)} 2xx/s, p99 ${result.latencyMs.p99} ms, non-2xx ${result.non2xx}`,
          )
        }
      }
    } finally {
      await Promise.all([bare.stop(), cloud?.stop()])
    }
    stored = countPunches(database.path)
    fsyncAfterMs = fsyncLatencyMs(dirname(database.path))
  } finally {
    await database.remove()
  }

  const baseline = totals(bareRuns)
  const subject = totals(cloudRuns)
  for (const [label, t] of [
    ['bare Fastify route', baseline],
    ['punch endpoint', subject],
  ] as const) {
    if (t.non2xx > 0) problems.push(`${label}: ${t.non2xx} non-2xx responses (the error path was measured)`)
    if (t.errors > 0) problems.push(`${label}: ${t.errors} connection errors or timeouts`)
  }
  const sample =
    cloudRuns.find((r) => r.errorSample)?.errorSample ?? bareRuns.find((r) => r.errorSample)?.errorSample
  if (sample) problems.push(`first error response: ${sample.slice(0, 300)}`)
  // autocannon drops the responses still in flight when a run ends, so the log may hold a few more.
  const answered = subject.ok + cloudWarmupOk
  if (stored < answered) problems.push(`${answered} punches acknowledged with 201 but only ${stored} stored`)
  notes.push(
    `${fsyncNote(fsyncBeforeMs, fsyncAfterMs)} Every 201 waits for the fsync that makes its punch durable (shared by concurrent punches); the baseline never touches the disk.`,
    `punch endpoint: ${subject.ok} 2xx, ${subject.non2xx} non-2xx, ${subject.errors} errors in ${subject.seconds.toFixed(1)} s; ${stored} punches in the log after the run (warm-up included).`,
    `bare Fastify route: ${baseline.ok} 2xx, ${baseline.non2xx} non-2xx, ${baseline.errors} errors in ${baseline.seconds.toFixed(1)} s.`,
  )

  let profileSummary: string | undefined
  if (profileDirectory) profileSummary = await summarizeCpuProfile(profileDirectory, profileName)

  return {
    name: 'punch-endpoint',
    title: 'Single punch endpoint (SQLite)',
    method:
      `POST ${PATH} with autocannon (${CONNECTIONS} connections, no pipelining, ${settings.warmupSeconds} s warm-up, ` +
      `${settings.rounds} alternating rounds of ${settings.seconds} s per server) against the Hajri cloud (buildApp, ` +
      `logger off, temporary SQLite file, tenant with ${EMPLOYEES} ACTIVE employees) in a child process. Every ` +
      'request is a distinct valid punch (own externalId and punchedAt). Baseline: a bare Fastify() POST route ' +
      'parsing the same JSON bodies and answering 201 with a small object, also in a child process, same load. ' +
      'Throughput counts 2xx only; p99 is the worst round.',
    startedAt: startedAt.toISOString(),
    elapsedSeconds: (Date.now() - startedAt.getTime()) / 1000,
    figures: [
      {
        name: 'throughput',
        value: { label: 'punch endpoint', value: subject.okPerSecond, unit: 'req/s' },
        baseline: { label: 'bare Fastify route', value: baseline.okPerSecond, unit: 'req/s' },
        ratio: ratio(subject.okPerSecond, baseline.okPerSecond),
        goal: { of: 'ratio', op: '>=', target: 0.5 },
      },
      {
        name: 'p99 latency',
        value: { label: 'punch endpoint', value: subject.p99Ms, unit: 'ms' },
        baseline: { label: 'bare Fastify route', value: baseline.p99Ms, unit: 'ms' },
        ratio: ratio(subject.p99Ms, baseline.p99Ms),
      },
    ],
    problems,
    notes,
    appendix:
      profileSummary &&
      `CPU profile of the punch server (this run's timings are perturbed by the profiler):\n\n${profileSummary}`,
    details: { fsyncBeforeMs, fsyncAfterMs, baseline, subject, storedPunches: stored, bareRuns, cloudRuns },
  }
}

export const punchEndpointBench: Benchmark = { name: 'punch-endpoint', run }
