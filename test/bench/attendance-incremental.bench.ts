import { AttendanceWorker, QUEUE_CONCURRENCY } from '../../cloud/features/attendance/attendance-worker.js'
import { addDays, datesFrom, daysBetween, localDate } from '../../cloud/features/attendance/work-dates.js'
import type { PunchInput } from '../../shared/punch.js'
import { formatInZone, nowMicros } from '../../shared/time.js'
import { postgresAvailability } from '../support/services.js'
import { type AttendanceBenchTenant, createAttendanceBenchTenant } from './attendance-bench-database.js'
import {
  type AttendanceBenchDialect,
  type AttendanceBenchSettings,
  readAttendanceBenchSettings,
} from './attendance-bench-settings.js'
import { benchEmployees, generatePunches, holidayOnOrAfter, mixNote } from './attendance-punches.js'
import type { BenchContext, Benchmark } from './benchmark.js'
import { type BenchResult, type Figure, ratio } from './report.js'
import { dialectName } from './webhook-bench-settings.js'

/** Punches per recordBatch call: an agent uploading its spool, or a gate's terminals at a shift change. */
const BATCH = 100
/** Batches ingested, untimed, before the clock starts: the JIT and caches warm, the queue drained. */
const WARMUP_BATCHES = 10
/**
 * The tenant's employees. Its punches are the first N of their days in time order (10,000 is about
 * six days): a recompute reads its employee's punches, so the tenant's size is part of its cost.
 */
const EMPLOYEES = 1_000
/** The worker must drain the queue within this long after ingestion, or the run is a problem. */
const DRAIN_TIMEOUT_MS = 600_000
const TIME_ZONE = 'Asia/Kolkata'

type Mode = 'off' | 'on'

interface IngestRun {
  mode: Mode
  punches: number
  created: number
  ingestSeconds: number
  /** From the last batch answered to an empty queue (0 with the queue off). */
  drainSeconds: number
  /** Wall time inside DayRecomputer.recompute, the worker's calls (0 with the queue off). */
  recomputeSeconds: number
  recomputeCalls: number
  /** Employee-days those calls recomputed. */
  recomputedDays: number
  queuedAfter: number
  days: number
  problems: string[]
}

/** The punches of the run, in time order as terminals send them, each new (its own externalId). */
function orderedPunches(count: number): {
  employees: ReturnType<typeof benchEmployees>
  inputs: PunchInput[]
  mix: string
} {
  const employees = benchEmployees(EMPLOYEES)
  // Ending two days back: every punch, a night shift's 06:00 OUT too, is in the past; starting
  // early enough for `count` punches, within the tenant's 90-day backfill window.
  const to = addDays(localDate(nowMicros(), TIME_ZONE), -2)
  const days = Math.min(80, Math.ceil(count / (EMPLOYEES * 1.5)) + 1)
  const dates = datesFrom(addDays(to, -(days - 1)), to)
  const holiday = holidayOnOrAfter(addDays(to, -7))
  const { punches, mix } = generatePunches(employees, dates, new Set([holiday]), TIME_ZONE, 7)
  punches.sort((a, b) => a.punchedAt - b.punchedAt)
  if (punches.length < count) throw new Error(`generated ${punches.length} punches, fewer than ${count}`)
  const tag = Math.random().toString(36).slice(2, 8)
  const inputs = punches.slice(0, count).map(
    (p, i): PunchInput => ({
      employeeCode: p.employeeCode,
      punchType: p.punchType,
      punchedAt: formatInZone(p.punchedAt, TIME_ZONE),
      deviceId: 'gate-1',
      source: 'hajri-bench',
      externalId: `inc-${tag}-${i}`,
    }),
  )
  return { employees, inputs, mix: mixNote(mix) }
}

async function countDays(bench: AttendanceBenchTenant): Promise<number> {
  const row = await bench.handle.db
    .selectFrom('attendance_days')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', bench.tenant.id)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

async function waitForEmptyQueue(bench: AttendanceBenchTenant, timeoutMs: number): Promise<number> {
  const work = bench.services.stores.read.attendanceWork
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const queued = await work.countQueued()
    if (queued === 0 || performance.now() > deadline) return queued
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/**
 * One run on a fresh database: the punches through recordBatch, BATCH at a time, one after the other;
 * with the queue on, an AttendanceWorker runs beside ingestion as `serve` runs it (start / stop) and
 * the run lasts until it has drained the queue.
 */
async function ingestRun(
  dialect: AttendanceBenchDialect,
  settings: AttendanceBenchSettings,
  mode: Mode,
  log: (message: string) => void,
): Promise<IngestRun & { mix: string }> {
  const total = settings.incrementalPunches + WARMUP_BATCHES * BATCH
  const { employees, inputs, mix } = orderedPunches(total)
  const first = inputs[0]?.punchedAt?.slice(0, 10) ?? ''
  const bench = await createAttendanceBenchTenant({
    dialect,
    postgresUrl: settings.postgresUrl,
    employees,
    incrementalAttendance: mode === 'on',
    configFrom: addDays(first, -7),
    holiday: holidayOnOrAfter(addDays(localDate(nowMicros(), TIME_ZONE), -9)),
  })
  const problems: string[] = []
  try {
    const { services, tenant } = bench
    const batches: PunchInput[][] = []
    for (let i = 0; i < inputs.length; i += BATCH) batches.push(inputs.slice(i, i + BATCH))
    const ingest = async (list: PunchInput[][]) => {
      let created = 0
      for (const batch of list) {
        const { body } = await services.punches.recordBatch(tenant, batch)
        created += body.summary.created
        if (body.summary.created !== batch.length && problems.length < 3)
          problems.push(
            `a batch created ${body.summary.created} of ${batch.length}: ${JSON.stringify(body.results[0])}`,
          )
      }
      return created
    }

    let worker: AttendanceWorker | undefined
    const workerErrors: string[] = []
    let recomputeMs = 0
    let recomputeCalls = 0
    let recomputedDays = 0
    if (mode === 'on') {
      worker = new AttendanceWorker({
        // As serve runs it (background-jobs.ts).
        queueConcurrency: QUEUE_CONCURRENCY[dialect],
        stores: services.stores,
        recomputer: services.recomputer,
        queue: services.attendanceQueue,
        outbox: services.outbox,
        log: {
          info: () => {},
          warn: () => {},
          error: (o: unknown) => workerErrors.push(JSON.stringify(o, Object.getOwnPropertyNames(o ?? {}))),
        } as never,
        now: nowMicros,
      })
      // The first round makes every employee's days for yesterday and today (a new tenant's
      // calendar): a one-off, done before the clock starts.
      await worker.makeCalendars()
      // The worker's recompute time, summed: measured around the recomputer it calls.
      const recomputer = services.recomputer
      const recompute = recomputer.recompute.bind(recomputer)
      recomputer.recompute = async (t, code, from, to) => {
        const started = performance.now()
        try {
          return await recompute(t, code, from, to)
        } finally {
          recomputeMs += performance.now() - started
          recomputeCalls++
          recomputedDays += daysBetween(from, to) + 1
        }
      }
      worker.start()
    }
    try {
      await ingest(batches.slice(0, WARMUP_BATCHES))
      if (mode === 'on') await waitForEmptyQueue(bench, DRAIN_TIMEOUT_MS)
      recomputeMs = 0
      recomputeCalls = 0
      recomputedDays = 0
      const timed = batches.slice(WARMUP_BATCHES)
      const punches = timed.reduce((n, b) => n + b.length, 0)
      const started = performance.now()
      const created = await ingest(timed)
      const ingested = performance.now()
      const queuedAfter = mode === 'on' ? await waitForEmptyQueue(bench, DRAIN_TIMEOUT_MS) : 0
      const drained = performance.now()
      await worker?.stop()
      worker = undefined
      const recomputeSeconds = recomputeMs / 1000
      const days = await countDays(bench)
      const queuedNow = await services.stores.read.attendanceWork.countQueued()
      if (created !== punches) problems.push(`${created} punches created of ${punches}`)
      if (queuedAfter > 0)
        problems.push(`${queuedAfter} days still queued ${DRAIN_TIMEOUT_MS / 1000} s after ingestion`)
      if (mode === 'off' && (queuedNow > 0 || days > 0))
        problems.push(`with the queue off, ${queuedNow} days were queued and ${days} computed`)
      if (mode === 'on' && days === 0) problems.push('the worker computed no day')
      for (const e of workerErrors.slice(0, 3))
        problems.push(`the worker logged an error: ${e.slice(0, 500)}`)
      const result: IngestRun = {
        mode,
        punches,
        created,
        ingestSeconds: (ingested - started) / 1000,
        drainSeconds: (drained - ingested) / 1000,
        recomputeSeconds,
        recomputeCalls,
        recomputedDays,
        queuedAfter,
        days,
        problems,
      }
      log(
        `${dialectName(dialect)}, queue ${mode}: ${(punches / result.ingestSeconds).toFixed(0)} punches/s ingested` +
          (mode === 'on'
            ? `, drained ${result.drainSeconds.toFixed(1)} s later; ${recomputeCalls} recomputes, ` +
              `${((1000 * recomputeSeconds) / punches).toFixed(2)} ms a punch`
            : ''),
      )
      return { ...result, mix }
    } finally {
      await worker?.stop()
    }
  } finally {
    await bench.remove()
  }
}

function sum(runs: readonly IngestRun[], f: (r: IngestRun) => number): number {
  return runs.reduce((n, r) => n + f(r), 0)
}

async function run(context: BenchContext): Promise<BenchResult> {
  const settings = readAttendanceBenchSettings()
  const rounds = context.settings.rounds
  const startedAt = new Date()
  const figures: Figure[] = []
  const notes: string[] = []
  const problems: string[] = []
  const details: Record<string, unknown> = { settings, rounds }
  let mix = ''
  for (const dialect of settings.dialects) {
    const name = dialectName(dialect)
    if (dialect === 'postgres') {
      // As the tests do: absent, it is skipped with its reason, unless HAJRI_TEST_REQUIRE_ALL=1.
      const { skipReason } = await postgresAvailability()
      if (skipReason) {
        notes.push(`PostgreSQL not measured: ${skipReason}.`)
        continue
      }
    }
    const runs: IngestRun[] = []
    // Alternating, so that drift on a shared machine hits both.
    for (let round = 0; round < rounds; round++) {
      for (const mode of ['off', 'on'] as const) {
        const r = await ingestRun(dialect, settings, mode, context.log)
        mix = r.mix
        runs.push(r)
        for (const p of r.problems) problems.push(`${name}, queue ${mode}, round ${round + 1}: ${p}`)
      }
    }
    const off = runs.filter((r) => r.mode === 'off')
    const on = runs.filter((r) => r.mode === 'on')
    const offRate = sum(off, (r) => r.punches) / sum(off, (r) => r.ingestSeconds)
    const onIngestRate = sum(on, (r) => r.punches) / sum(on, (r) => r.ingestSeconds)
    const onDrainedRate = sum(on, (r) => r.punches) / sum(on, (r) => r.ingestSeconds + r.drainSeconds)
    const offMsPerPunch = 1000 / offRate
    const recomputeMsPerPunch = (1000 * sum(on, (r) => r.recomputeSeconds)) / sum(on, (r) => r.punches)
    const baseline = { label: 'recordBatch, queue off, no worker', value: offRate, unit: 'punches/s' }
    figures.push(
      {
        name: `${dialect}: ingestion with incremental attendance`,
        value: { label: 'recordBatch, queue on, worker running', value: onIngestRate, unit: 'punches/s' },
        baseline,
        ratio: ratio(onIngestRate, offRate),
      },
      {
        name: `${dialect}: ingestion until every day is recomputed`,
        value: { label: 'queue on, until the worker drained it', value: onDrainedRate, unit: 'punches/s' },
        baseline,
        ratio: ratio(onDrainedRate, offRate),
      },
      {
        name: `${dialect}: worker recompute time per punch`,
        value: { label: 'DayRecomputer.recompute, summed', value: recomputeMsPerPunch, unit: 'ms/punch' },
        baseline: { label: 'ingestion alone (queue off)', value: offMsPerPunch, unit: 'ms/punch' },
        ratio: ratio(recomputeMsPerPunch, offMsPerPunch),
      },
    )
    const calls = sum(on, (r) => r.recomputeCalls)
    notes.push(
      `${name}: ${rounds} rounds of queue off then on, each ${settings.incrementalPunches} punches (after ` +
        `${WARMUP_BATCHES} untimed batches) in ${BATCH}-punch batches on a fresh database; queue off ` +
        `${off.map((r) => `${r.ingestSeconds.toFixed(1)} s`).join(', ')}; queue on ` +
        `${on.map((r) => `${r.ingestSeconds.toFixed(1)} s + ${r.drainSeconds.toFixed(1)} s to drain`).join(', ')}; ` +
        `${calls} recomputes (${(calls / sum(on, (r) => r.punches)).toFixed(2)} a punch, ` +
        `${(sum(on, (r) => r.recomputedDays) / Math.max(1, calls)).toFixed(1)} days each); ` +
        `${on.map((r) => r.days).join(', ')} days stored.`,
    )
    details[dialect] = runs
  }
  notes.push(`The punches, in time order: ${mix}.`)
  return {
    name: 'attendance-incremental',
    title: 'Attendance: incremental recomputation while punches arrive',
    method:
      `${settings.incrementalPunches} punches of a ${EMPLOYEES}-employee tenant (in time order: days of ` +
      'IN/OUT, some breaks, missing and double punches, over two departments with a day and a night shift) through ' +
      `PunchService.recordBatch, ${BATCH} a call, one call at a time, in this process. Baseline: ` +
      'createServices(…, { incrementalAttendance: false }), no queue and no worker. Subject: the queue on and an ' +
      'AttendanceWorker started beside ingestion as `serve` starts it, timed until it has drained the queue. ' +
      "The worker's recompute time is summed around DayRecomputer.recompute. Each run on a fresh database " +
      '(a temporary SQLite file, or a throwaway PostgreSQL schema), rounds alternating.',
    startedAt: startedAt.toISOString(),
    elapsedSeconds: (Date.now() - startedAt.getTime()) / 1000,
    figures,
    problems,
    notes,
    details,
  }
}

export const attendanceIncrementalBench: Benchmark = { name: 'attendance-incremental', run }
