import { rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { MAX_BATCH_PUNCHES } from '../../shared/punch.js'
import { createBenchDatabase } from './bench-database.js'
import type { BenchContext, Benchmark } from './benchmark.js'
import { countPunches } from './count-punches.js'
import { summarizeCpuProfile } from './cpu-profile-summary.js'
import { fsyncLatencyMs, fsyncNote } from './fsync-latency.js'
import { createPunchGenerator } from './punch-generator.js'
import { type RawInsertResult, rawPunchInsert } from './raw-punch-insert.js'
import { type BenchResult, ratio } from './report.js'
import { type LoadResult, runLoad } from './run-load.js'
import { ServerProcess } from './server-process.js'

const PATH = '/api/public/v1/attendance/punches/batch'
const EMPLOYEES = 500
// A few agents uploading their spools at once: enough to keep the server busy while one request's
// response travels, not so many that 85 kB bodies queue for seconds.
const CONNECTIONS = 4

/** What the batch responses said, from their summary (the first thing in each body). */
interface Tally {
  created: number
  duplicate: number
  rejected: number
  unreadable: number
}

const SUMMARY = /"created":(\d+),"duplicate":(\d+),"rejected":(\d+)/

function tally(into: Tally, status: number, body: string): void {
  if (status !== 200) return
  const m = SUMMARY.exec(body.slice(0, 200))
  if (!m) {
    into.unreadable++
    return
  }
  into.created += Number(m[1])
  into.duplicate += Number(m[2])
  into.rejected += Number(m[3])
}

async function run(context: BenchContext): Promise<BenchResult> {
  const { settings, log } = context
  const startedAt = new Date()
  const database = await createBenchDatabase(EMPLOYEES)
  const profileName = 'batch-ingest-server'
  const profileDirectory = settings.cpuProfile
    ? join(context.resultsDirectory, 'profiles', profileName)
    : undefined
  // Profiles of an earlier run would be mistaken for this one's.
  if (profileDirectory) await rm(profileDirectory, { recursive: true, force: true })
  const runs: { load: LoadResult; tally: Tally; raw: RawInsertResult }[] = []
  const warmup: Tally = { created: 0, duplicate: 0, rejected: 0, unreadable: 0 }
  let stored = 0
  let fsyncBeforeMs = Number.NaN
  let fsyncAfterMs = Number.NaN
  try {
    const server = await ServerProcess.start({
      entry: 'cloud-server.ts',
      args: [database.url],
      profileDirectory,
    })
    try {
      const nextPunch = createPunchGenerator(database.employeeCodes)
      const load = (seconds: number, into: Tally) =>
        runLoad({
          url: `${server.url}${PATH}`,
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${database.apiKey}` },
          connections: CONNECTIONS,
          seconds,
          timeoutSeconds: 60,
          nextBody: () =>
            JSON.stringify({ punches: Array.from({ length: MAX_BATCH_PUNCHES }, () => nextPunch()) }),
          onResponse: (status, body) => tally(into, status, body),
        })
      log(`warming up for ${settings.warmupSeconds} s`)
      fsyncBeforeMs = fsyncLatencyMs(dirname(database.path))
      await load(settings.warmupSeconds, warmup)
      for (let round = 0; round < settings.rounds; round++) {
        const t: Tally = { created: 0, duplicate: 0, rejected: 0, unreadable: 0 }
        const result = await load(settings.seconds, t)
        // The baseline inserts as many rows as the endpoint stored, in the same 500-row transactions,
        // right after it: whatever load the machine had then, both saw it.
        const raw = await rawPunchInsert(Math.max(t.created, MAX_BATCH_PUNCHES), MAX_BATCH_PUNCHES)
        runs.push({ load: result, tally: t, raw })
        log(
          `round ${round + 1}: ${(t.created / result.seconds).toFixed(0)} punches/s over HTTP, ` +
            `raw insert ${raw.rowsPerSecond.toFixed(0)} rows/s`,
        )
      }
    } finally {
      await server.stop()
    }
    stored = countPunches(database.path)
    fsyncAfterMs = fsyncLatencyMs(dirname(database.path))
  } finally {
    await database.remove()
  }

  const sum = (f: (r: (typeof runs)[number]) => number) => runs.reduce((acc, r) => acc + f(r), 0)
  const created = sum((r) => r.tally.created)
  const seconds = sum((r) => r.load.seconds)
  const rawRows = sum((r) => r.raw.rows)
  const rawSeconds = sum((r) => r.raw.seconds)
  const punchesPerSecond = created / seconds
  const rawPerSecond = rawRows / rawSeconds
  const requests = sum((r) => r.load.ok)
  const non2xx = sum((r) => r.load.non2xx)
  const errors = sum((r) => r.load.errors + r.load.timeouts)
  const notCreated = sum((r) => r.tally.rejected + r.tally.duplicate)
  const unreadable = sum((r) => r.tally.unreadable)
  const p99 = Math.max(...runs.map((r) => r.load.latencyMs.p99))

  const problems: string[] = []
  if (non2xx > 0)
    problems.push(
      `${non2xx} non-2xx responses; first: ${runs.find((r) => r.load.errorSample)?.load.errorSample?.slice(0, 300)}`,
    )
  if (errors > 0) problems.push(`${errors} connection errors or timeouts`)
  if (notCreated > 0)
    problems.push(`${notCreated} punches came back rejected or duplicate instead of created`)
  if (unreadable > 0) problems.push(`${unreadable} responses without a readable summary`)
  if (created !== requests * MAX_BATCH_PUNCHES)
    problems.push(
      `${requests} batches answered but ${created} punches created, not ${requests * MAX_BATCH_PUNCHES}`,
    )
  if (stored < created + warmup.created)
    problems.push(`${created + warmup.created} punches created but only ${stored} stored`)

  const notes = [
    fsyncNote(fsyncBeforeMs, fsyncAfterMs),
    `${requests} batch requests (200), ${non2xx} non-2xx, ${errors} errors in ${seconds.toFixed(1)} s; ${created} punches created, ` +
      `p99 ${p99} ms per ${MAX_BATCH_PUNCHES}-punch request; ${stored} punches in the log after the run (warm-up included).`,
    `raw insert: ${rawRows} rows in ${rawSeconds.toFixed(2)} s.`,
  ]
  let profileSummary: string | undefined
  if (profileDirectory) profileSummary = await summarizeCpuProfile(profileDirectory, profileName)

  return {
    name: 'batch-ingest',
    title: 'Batch ingestion (SQLite)',
    method:
      `POST ${PATH} with ${MAX_BATCH_PUNCHES} distinct valid punches per request, autocannon with ${CONNECTIONS} ` +
      `connections, ${settings.warmupSeconds} s warm-up then ${settings.rounds} rounds of ${settings.seconds} s, ` +
      'against the Hajri cloud in a child process (temporary SQLite file). Punches/s counts `created` from the ' +
      'response summaries. Baseline, after each round: the same number of rows inserted with raw better-sqlite3 ' +
      'prepared statements in transactions of 500 into a database made by the product migration (same ' +
      'columns, indexes, foreign keys), WAL, synchronous=FULL, foreign_keys=ON.',
    startedAt: startedAt.toISOString(),
    elapsedSeconds: (Date.now() - startedAt.getTime()) / 1000,
    figures: [
      {
        name: 'punches/s',
        value: { label: 'batch endpoint', value: punchesPerSecond, unit: 'punches/s' },
        baseline: { label: 'raw better-sqlite3 insert', value: rawPerSecond, unit: 'rows/s' },
        ratio: ratio(punchesPerSecond, rawPerSecond),
        goal: { of: 'value', op: '>=', target: 50_000 },
      },
    ],
    problems,
    notes,
    appendix:
      profileSummary &&
      `CPU profile of the batch server (this run's timings are perturbed by the profiler):\n\n${profileSummary}`,
    details: { fsyncBeforeMs, fsyncAfterMs, runs, warmup, storedPunches: stored },
  }
}

export const batchIngestBench: Benchmark = { name: 'batch-ingest', run }
