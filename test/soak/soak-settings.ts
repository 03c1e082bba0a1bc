/**
 * How long and how hard the soak runs (a bounded soak, about 10 minutes). The defaults
 * are the CI run; the variables shorten it while working on the soak (HAJRI_SOAK_SECONDS=60).
 */
export interface SoakSettings {
  /** HAJRI_SOAK_SECONDS: seconds of steady load, warm-up included (default 600). */
  seconds: number
  /** HAJRI_SOAK_RATE: punches a second the MQTT device publishes (default 60). */
  rate: number
  /** HAJRI_SOAK_SAMPLE_SECONDS: seconds between samples (default: 10, fewer for a short run). */
  sampleSeconds: number
  /** HAJRI_SOAK_WARMUP: the share of the load left out of the judgement (default 0.2). */
  warmupShare: number
  /** HAJRI_SOAK_EMPLOYEES: employees of the tenant, listed page by page by the API reader (default 300). */
  employees: number
  /** HAJRI_SOAK_KEEP=1: keep the directory with every process's log. */
  keep: boolean
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0 || value > max) {
    throw new Error(`${name} must be a number above 0 and at most ${max}, got "${raw}"`)
  }
  return value
}

export function readSoakSettings(env: NodeJS.ProcessEnv = process.env): SoakSettings {
  const seconds = positive(env, 'HAJRI_SOAK_SECONDS', 600, 7 * 86_400)
  if (seconds < 30) throw new Error(`HAJRI_SOAK_SECONDS must be at least 30, got "${env.HAJRI_SOAK_SECONDS}"`)
  // About 60 samples in a 10-minute run; at least 25 in a short one, so that each third has some.
  const defaultSample = Math.min(10, Math.max(1, seconds / 30))
  const warmupShare = positive(env, 'HAJRI_SOAK_WARMUP', 0.2, 0.5)
  return {
    seconds,
    rate: positive(env, 'HAJRI_SOAK_RATE', 60, 1000),
    sampleSeconds: positive(env, 'HAJRI_SOAK_SAMPLE_SECONDS', defaultSample, 600),
    warmupShare,
    employees: Math.round(positive(env, 'HAJRI_SOAK_EMPLOYEES', 300, 100_000)),
    keep: env.HAJRI_SOAK_KEEP === '1',
  }
}
