import { AttendanceWorker } from '../../cloud/features/attendance/attendance-worker.js'
import { computeDays } from '../../cloud/features/attendance/engine/compute-days.js'
import type { DaysInput } from '../../cloud/features/attendance/engine/types.js'
import { addDays, datesFrom, localDate, startOfDate } from '../../cloud/features/attendance/work-dates.js'
import { nowMicros } from '../../shared/time.js'
import { postgresAvailability } from '../support/services.js'
import {
  type AttendanceBenchTenant,
  BENCH_ACTOR,
  createAttendanceBenchTenant,
  type GroupInputs,
  groupInputs,
  insertPunchesRaw,
} from './attendance-bench-database.js'
import {
  type AttendanceBenchDialect,
  type AttendanceBenchSettings,
  readAttendanceBenchSettings,
} from './attendance-bench-settings.js'
import { benchEmployees, generatePunches, holidayOnOrAfter, mixNote } from './attendance-punches.js'
import { startTrickle, type TrickleResult, trickleAlone } from './attendance-trickle.js'
import type { BenchContext, Benchmark } from './benchmark.js'
import { type BenchResult, type Figure, ratio } from './report.js'
import { dialectName } from './webhook-bench-settings.js'
import { ms, percentiles } from './webhook-percentiles.js'

// The trickle of ingestion beside the recompute: 25 punches every 100 ms (250 punches/s, a busy
// gate at a shift change), and the same alone for this long, as its baseline.
const TRICKLE = { batchSize: 25, intervalMs: 100 }
const TRICKLE_BASELINE_SECONDS = 10
// Employees the engine computes, untimed, before it is timed: the JIT warmed as the product's is.
const ENGINE_WARMUP_EMPLOYEES = 300
// Stored records compared with the engine-only baseline's, to know the two computed the same days.
const SAMPLE_EMPLOYEES = 50

interface RecomputeRun {
  seconds: number
  daysPerSecond: number
  daysChanged: number
  status: string
  employeesDone: number
  /** Stopped before the job was done (too slow for the run's time limit). */
  stopped: boolean
  trickle: TrickleResult
}

interface DialectResult {
  dialect: AttendanceBenchDialect
  employees: number
  days: number
  punches: number
  seedSeconds: number
  engine: { seconds: number; daysPerSecond: number; passes: number }
  first: RecomputeRun
  second: RecomputeRun
  trickleAlone: TrickleResult
  storedDays: number
  sampleMismatches: number
  workerErrors: string[]
  mix: string
}

/** The engine alone over every employee's inputs, already in memory: the baseline. */
function engineOnly(inputs: readonly DaysInput[]): { seconds: number; days: number; output: number } {
  let days = 0
  let output = 0
  const started = performance.now()
  for (const input of inputs) {
    const computed = computeDays(input)
    days += computed.length
    // Something the loop cannot skip.
    output += computed[0]?.workedMinutes ?? 0
  }
  return { seconds: (performance.now() - started) / 1000, days, output }
}

/**
 * One tenant-wide recompute as the product runs it, with the trickle of ingestion beside it. A run
 * past `limit.seconds`, or past `limit.employees`, is stopped between two chunks and its job marked
 * failed (so that the next run does not resume it): its rate is then over the employees it did.
 */
async function recompute(
  bench: AttendanceBenchTenant,
  worker: AttendanceWorker,
  from: string,
  to: string,
  limit: { seconds: number; employees: number },
  log: (message: string) => void,
): Promise<RecomputeRun> {
  const { services, tenant, employees } = bench
  const trickle = startTrickle({ services, tenant, employeeCodes: employees.map((e) => e.code), ...TRICKLE })
  const started = performance.now()
  let jobId: string
  let stopped = false
  try {
    jobId = (await services.attendance.startRecompute(tenant, { from, to }, BENCH_ACTOR)).id
    let logged = 0
    while (await worker.advanceJob()) {
      const done = (await services.attendance.getJob(tenant, jobId)).employeesDone
      const seconds = (performance.now() - started) / 1000
      if (done >= logged + 1_000) {
        logged = done
        log(`  ${done} employees in ${seconds.toFixed(1)} s`)
      }
      // Every employee done: the next call finds none left and ends the job; that is no stop.
      if (done < employees.length && (seconds > limit.seconds || done >= limit.employees)) {
        stopped = true
        break
      }
    }
  } catch (err) {
    await trickle.stop()
    throw err
  }
  const seconds = (performance.now() - started) / 1000
  const trickled = await trickle.stop()
  const job = await services.attendance.getJob(tenant, jobId)
  if (stopped)
    await bench.handle.db
      .updateTable('attendance_jobs')
      .set({
        status: 'failed',
        error: 'stopped by the benchmark',
        claimed_until: null,
        finished_at: nowMicros(),
      })
      .where('id', '=', jobId)
      .execute()
  const days = job.employeesDone * datesFrom(from, to).length
  return {
    seconds,
    daysPerSecond: days / seconds,
    daysChanged: job.daysChanged,
    status: job.status,
    employeesDone: job.employeesDone,
    stopped,
    trickle: trickled,
  }
}

async function runOn(
  dialect: AttendanceBenchDialect,
  settings: AttendanceBenchSettings,
  log: (message: string) => void,
): Promise<DialectResult> {
  const name = dialectName(dialect)
  const timeZone = 'Asia/Kolkata'
  // A month that has ended: two days back, so every day is past its finalization (final at once).
  const to = addDays(localDate(nowMicros(), timeZone), -2)
  const from = addDays(to, -(settings.recomputeDays - 1))
  const dates = datesFrom(from, to)
  const holiday = holidayOnOrAfter(addDays(from, Math.floor(dates.length / 2)))
  const employees = benchEmployees(settings.recomputeEmployees)
  log(`${name}: seeding ${employees.length} employees × ${dates.length} days (${from}..${to})`)
  const seedStarted = performance.now()
  const bench = await createAttendanceBenchTenant({
    dialect,
    postgresUrl: settings.postgresUrl,
    employees,
    incrementalAttendance: true,
    configFrom: addDays(from, -7),
    holiday,
  })
  try {
    const { services, tenant } = bench
    if (tenant.timeZone !== timeZone) throw new Error(`the tenant is in ${tenant.timeZone}, not ${timeZone}`)
    const generated = generatePunches(employees, dates, new Set([holiday]), timeZone)
    const byEmployee = await insertPunchesRaw(bench, generated.punches)
    const seedSeconds = (performance.now() - seedStarted) / 1000
    log(
      `${name}: ${generated.punches.length} punches stored in ${seedSeconds.toFixed(1)} s (seeding, untimed)`,
    )

    // The engine's inputs, as the recomputer builds them: punches from two days before to two after.
    const groups = new Map<string, GroupInputs>()
    for (const group of new Set(employees.map((e) => e.group)))
      groups.set(group, await groupInputs(bench, group))
    const windowFrom = startOfDate(addDays(from, -2), timeZone)
    const windowTo = startOfDate(addDays(to, 3), timeZone)
    const inputs: DaysInput[] = employees.map((e) => ({
      employeeCode: e.code,
      timeZone,
      dates,
      ...(groups.get(e.group) as GroupInputs),
      punches: (byEmployee.get(e.code) ?? []).filter(
        (p) => p.punchedAt >= windowFrom && p.punchedAt < windowTo,
      ),
    }))
    engineOnly(inputs.slice(0, ENGINE_WARMUP_EMPLOYEES))
    const engineA = engineOnly(inputs)
    log(`${name}: engine alone ${(engineA.days / engineA.seconds).toFixed(0)} employee-days/s`)

    const workerErrors: string[] = []
    const worker = new AttendanceWorker({
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

    log(`${name}: the trickle alone for ${TRICKLE_BASELINE_SECONDS} s`)
    const alone = await trickleAlone(
      { services, tenant, employeeCodes: employees.map((e) => e.code), ...TRICKLE },
      TRICKLE_BASELINE_SECONDS,
    )
    log(`${name}: first recompute (every day new)`)
    const first = await recompute(
      bench,
      worker,
      from,
      to,
      { seconds: settings.recomputeRunSeconds, employees: employees.length },
      log,
    )
    log(
      `${name}: first run ${first.daysPerSecond.toFixed(0)} employee-days/s in ${first.seconds.toFixed(1)} s`,
    )
    const storedDays = Number(
      (
        await bench.handle.db
          .selectFrom('attendance_days')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('tenant_id', '=', tenant.id)
          .where('work_date', '>=', from)
          .where('work_date', '<=', to)
          .executeTakeFirstOrThrow()
      ).n,
    )

    // The baseline computed what the product stored: compare some employees' records.
    let sampleMismatches = 0
    const step = Math.max(1, Math.floor(first.employeesDone / SAMPLE_EMPLOYEES))
    for (let i = 0; i < first.employeesDone; i += step) {
      const input = inputs[i] as DaysInput
      const stored = new Map(
        (await services.stores.read.days.forDates(tenant.id, input.employeeCode, from, to)).map((r) => [
          r.work_date,
          r.record,
        ]),
      )
      for (const day of computeDays(input))
        if (stored.get(day.workDate) !== JSON.stringify(day)) sampleMismatches++
    }

    log(`${name}: second recompute (nothing changed)`)
    // Over the employees the first run did: their days are stored, and unchanged.
    const second = await recompute(
      bench,
      worker,
      from,
      to,
      { seconds: settings.recomputeRunSeconds, employees: first.employeesDone },
      log,
    )
    log(
      `${name}: second run ${second.daysPerSecond.toFixed(0)} employee-days/s in ${second.seconds.toFixed(1)} s`,
    )
    const engineB = engineOnly(inputs)
    const engineSeconds = engineA.seconds + engineB.seconds
    return {
      dialect,
      employees: employees.length,
      days: dates.length,
      punches: generated.punches.length,
      seedSeconds,
      engine: {
        seconds: engineSeconds,
        daysPerSecond: (engineA.days + engineB.days) / engineSeconds,
        passes: 2,
      },
      first,
      second,
      trickleAlone: alone,
      storedDays,
      sampleMismatches,
      workerErrors,
      mix: mixNote(generated.mix),
    }
  } finally {
    await bench.remove()
  }
}

function report(r: DialectResult, figures: Figure[], notes: string[], problems: string[]): void {
  const name = dialectName(r.dialect)
  const key = r.dialect
  const jobLabel = (run: RecomputeRun) =>
    run.stopped
      ? `recompute job, ${name}, stopped at ${run.employeesDone} of ${r.employees} employees`
      : `recompute job, ${name}`
  const engine = {
    label: 'computeDays alone, inputs in memory',
    value: r.engine.daysPerSecond,
    unit: 'employee-days/s',
  }
  figures.push(
    {
      name: `${key}: tenant recompute, first run (every day new)`,
      value: { label: jobLabel(r.first), value: r.first.daysPerSecond, unit: 'employee-days/s' },
      baseline: engine,
      ratio: ratio(r.first.daysPerSecond, r.engine.daysPerSecond),
    },
    {
      name: `${key}: tenant recompute, second run (nothing changed)`,
      value: { label: jobLabel(r.second), value: r.second.daysPerSecond, unit: 'employee-days/s' },
      baseline: engine,
      ratio: ratio(r.second.daysPerSecond, r.engine.daysPerSecond),
    },
  )
  const alone = percentiles(r.trickleAlone.latenciesMs)
  for (const [run, label] of [
    [r.first, 'first run'],
    [r.second, 'second run'],
  ] as const) {
    const during = percentiles(run.trickle.latenciesMs)
    for (const p of ['p50', 'p99'] as const) {
      figures.push({
        name: `${key}: punch batch ${p} during the recompute (${label})`,
        value: {
          label: `${TRICKLE.batchSize}-punch recordBatch, recompute running`,
          value: during[p],
          unit: 'ms',
        },
        baseline: { label: 'the same trickle, no recompute', value: alone[p], unit: 'ms' },
        ratio: ratio(during[p], alone[p]),
      })
    }
    notes.push(
      `${name}, ${label}: ${r.employees} employees × ${r.days} days in ${run.seconds.toFixed(1)} s, job ${run.status}, ` +
        `${run.employeesDone} employees done, ${run.daysChanged} days changed; the trickle beside it: ${run.trickle.batches} ` +
        `batches, ${run.trickle.created} punches created, latency p50 ${ms(during.p50)} / p90 ${ms(during.p90)} / ` +
        `p99 ${ms(during.p99)} / max ${ms(during.max)} ms.`,
    )
    for (const f of run.trickle.failures.slice(0, 3)) problems.push(`${name}, ${label}: ${f}`)
  }
  notes.push(
    `${name}: the trickle alone: ${r.trickleAlone.batches} batches in ${r.trickleAlone.seconds.toFixed(1)} s, latency ` +
      `p50 ${ms(alone.p50)} / p90 ${ms(alone.p90)} / p99 ${ms(alone.p99)} / max ${ms(alone.max)} ms.`,
    `${name}: ${r.punches} punches seeded in ${r.seedSeconds.toFixed(1)} s (untimed); ${r.mix}; engine alone ` +
      `${r.engine.passes} passes in ${r.engine.seconds.toFixed(2)} s; ${r.storedDays} days stored after the first run.`,
  )
  for (const f of r.trickleAlone.failures.slice(0, 3)) problems.push(`${name}, trickle alone: ${f}`)
  for (const [run, label] of [
    [r.first, 'first run'],
    [r.second, 'second run'],
  ] as const) {
    if (run.stopped)
      notes.push(
        `${name}, ${label}: STOPPED after ${run.seconds.toFixed(0)} s at ${run.employeesDone} of ${r.employees} ` +
          `employees (HAJRI_BENCH_ATTENDANCE_RUN_SECONDS); at its rate the whole tenant would take ` +
          `${((r.employees * r.days) / run.daysPerSecond / 60).toFixed(1)} min. Its rate is over the employees it did, ` +
          'in the full-size tenant.',
      )
    else if (run.status !== 'done' || run.employeesDone !== r.employees)
      problems.push(
        `${name}, ${label}: the job ended ${run.status} with ${run.employeesDone} of ${r.employees} employees`,
      )
  }
  const expected = r.first.employeesDone * r.days
  if (r.first.daysChanged !== expected)
    problems.push(
      `${name}: the first run wrote ${r.first.daysChanged} days, not every one of the ${expected}`,
    )
  if (r.second.daysChanged !== 0)
    problems.push(`${name}: the second run wrote ${r.second.daysChanged} days where nothing had changed`)
  if (r.storedDays !== expected) problems.push(`${name}: ${r.storedDays} days stored, not ${expected}`)
  if (r.sampleMismatches > 0)
    problems.push(
      `${name}: ${r.sampleMismatches} sampled days differ between the engine-only baseline and the product`,
    )
  for (const e of r.workerErrors.slice(0, 3))
    problems.push(`${name}: the worker logged an error: ${e.slice(0, 500)}`)
}

async function run(context: BenchContext): Promise<BenchResult> {
  const settings = readAttendanceBenchSettings()
  const startedAt = new Date()
  const figures: Figure[] = []
  const notes: string[] = []
  const problems: string[] = []
  const details: Record<string, unknown> = { settings }
  for (const dialect of settings.dialects) {
    if (dialect === 'postgres') {
      // As the tests do: absent, it is skipped with its reason, unless HAJRI_TEST_REQUIRE_ALL=1.
      const { skipReason } = await postgresAvailability()
      if (skipReason) {
        notes.push(`PostgreSQL not measured: ${skipReason}.`)
        continue
      }
    }
    const result = await runOn(dialect, settings, context.log)
    report(result, figures, notes, problems)
    details[dialect] = {
      ...result,
      first: { ...result.first, trickle: percentiles(result.first.trickle.latenciesMs) },
      second: { ...result.second, trickle: percentiles(result.second.trickle.latenciesMs) },
      trickleAlone: percentiles(result.trickleAlone.latenciesMs),
    }
  }
  if (settings.recomputeEmployees !== 5_000 || settings.recomputeDays !== 31)
    notes.push(
      `Run at ${settings.recomputeEmployees} employees × ${settings.recomputeDays} days ` +
        '(HAJRI_BENCH_ATTENDANCE_EMPLOYEES / _DAYS), not the 5,000 × 31 the figures are quoted for.',
    )
  return {
    name: 'attendance-recompute',
    title: 'Attendance: a tenant-wide recompute',
    method:
      `A tenant of ${settings.recomputeEmployees} employees in two departments (one in five on a 22:00–06:00 night ` +
      'shift, the rest on 09:00–18:00, assigned by group; a tenant policy and a group policy; Sundays off; one ' +
      `holiday) with ${settings.recomputeDays} days of generated punches (most IN/OUT, some with a break, some missing ` +
      'OUT or IN, some double IN, a few absent) stored raw (untimed). Timed: POST /attendance/recompute as the ' +
      'service runs it (AttendanceService.startRecompute) then AttendanceWorker.advanceJob() until the job is done, ' +
      'in this process; once with every day new, then again with nothing changed (no day written). Baseline: ' +
      'computeDays (the pure engine) over the same inputs already in memory, before and after. Beside each ' +
      `recompute, a trickle of ${TRICKLE.batchSize}-punch batches every ${TRICKLE.intervalMs} ms through ` +
      'PunchService.recordBatch, open loop, latency from when each was due; its baseline is the same trickle for ' +
      `${TRICKLE_BASELINE_SECONDS} s with no recompute. On SQLite (a temporary file) and PostgreSQL (a throwaway schema).`,
    startedAt: startedAt.toISOString(),
    elapsedSeconds: (Date.now() - startedAt.getTime()) / 1000,
    figures,
    problems,
    notes,
    details,
  }
}

export const attendanceRecomputeBench: Benchmark = { name: 'attendance-recompute', run }
