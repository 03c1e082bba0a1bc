import { POSTGRES_URL } from '../support/services.js'
import type { WebhookBenchDialect } from './webhook-bench-settings.js'

export type AttendanceBenchDialect = WebhookBenchDialect

/**
 * Settings of the attendance benchmarks beyond the suite's own (bench-settings.ts), read from the
 * environment the same way. The defaults are the sizes the figures are quoted for; the variables
 * are for local runs while working on a benchmark, and a run says in its notes what size it had.
 */
export interface AttendanceBenchSettings {
  /**
   * The databases measured, one after the other: both by default. HAJRI_BENCH_DATABASE=sqlite (or
   * postgres), as the webhook benchmarks read it, runs one.
   */
  dialects: AttendanceBenchDialect[]
  /** HAJRI_TEST_POSTGRES_URL, as the tests use it (postgres://postgres@127.0.0.1:5432/test by default). */
  postgresUrl: string
  /** HAJRI_BENCH_ATTENDANCE_EMPLOYEES: the tenant of attendance-recompute (5,000). */
  recomputeEmployees: number
  /** HAJRI_BENCH_ATTENDANCE_DAYS: the work dates it recomputes (31). */
  recomputeDays: number
  /**
   * HAJRI_BENCH_ATTENDANCE_RUN_SECONDS: how long one recompute run may take (90 s). A run still going
   * then is stopped, and its rate is measured over the employees it did; the notes say so.
   */
  recomputeRunSeconds: number
  /** HAJRI_BENCH_ATTENDANCE_PUNCHES: punches attendance-incremental ingests per run (10,000). */
  incrementalPunches: number
}

function whole(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 1): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${name} must be a whole number ≥ ${min}, got "${raw}"`)
  return value
}

function dialects(raw: string | undefined): AttendanceBenchDialect[] {
  if (raw === undefined || raw === '') return ['sqlite', 'postgres']
  if (raw === 'sqlite' || raw === 'postgres') return [raw]
  throw new Error(`HAJRI_BENCH_DATABASE must be sqlite or postgres, got "${raw}"`)
}

export function readAttendanceBenchSettings(env: NodeJS.ProcessEnv = process.env): AttendanceBenchSettings {
  return {
    dialects: dialects(env.HAJRI_BENCH_DATABASE),
    postgresUrl: POSTGRES_URL,
    recomputeEmployees: whole(env, 'HAJRI_BENCH_ATTENDANCE_EMPLOYEES', 5_000),
    // The recompute endpoint takes at most 92 days (MAX_RECOMPUTE_DAYS).
    recomputeDays: Math.min(92, whole(env, 'HAJRI_BENCH_ATTENDANCE_DAYS', 31)),
    recomputeRunSeconds: whole(env, 'HAJRI_BENCH_ATTENDANCE_RUN_SECONDS', 90),
    incrementalPunches: whole(env, 'HAJRI_BENCH_ATTENDANCE_PUNCHES', 10_000, 100),
  }
}
