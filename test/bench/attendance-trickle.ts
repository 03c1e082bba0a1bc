import { randomBytes } from 'node:crypto'
import type { TenantContext } from '../../cloud/auth/tenant-context.js'
import type { Services } from '../../cloud/services.js'
import { formatInZone, nowMicros } from '../../shared/time.js'

export interface TrickleResult {
  /** ms from when each batch was due to when recordBatch answered. */
  latenciesMs: number[]
  batches: number
  created: number
  /** Batches that failed or did not create every punch: the figure then measures something else. */
  failures: string[]
  seconds: number
}

export interface Trickle {
  stop(): Promise<TrickleResult>
}

/**
 * A steady trickle of punch batches, as terminals at a gate send them while a recompute runs: a batch
 * of `batchSize` new punches every `intervalMs`, through PunchService.recordBatch (what
 * POST /attendance/punches/batch calls), open loop: a batch is sent when it is due whether or not
 * the one before has been answered, and its latency is counted from when it was due, so time the
 * event loop spent blocked before sending it counts too (no coordinated omission).
 */
export function startTrickle(options: {
  services: Services
  tenant: TenantContext
  employeeCodes: readonly string[]
  batchSize: number
  intervalMs: number
}): Trickle {
  const { services, tenant, employeeCodes, batchSize, intervalMs } = options
  const tag = randomBytes(4).toString('hex')
  const latenciesMs: number[] = []
  const failures: string[] = []
  const inFlight = new Set<Promise<void>>()
  let created = 0
  let n = 0
  let batches = 0
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  const started = performance.now()

  const send = (dueAt: number) => {
    const at = nowMicros() - 60_000_000
    const punches = Array.from({ length: batchSize }, (_, k) => {
      const i = n++
      return {
        employeeCode: employeeCodes[i % employeeCodes.length] as string,
        punchType: Math.floor(i / employeeCodes.length) % 2 === 0 ? 'IN' : 'OUT',
        punchedAt: formatInZone(at + k, tenant.timeZone),
        deviceId: 'gate-2',
        source: 'hajri-bench',
        externalId: `trickle-${tag}-${i}`,
      }
    })
    batches++
    const p = services.punches
      .recordBatch(tenant, punches)
      .then(({ body }) => {
        latenciesMs.push(performance.now() - dueAt)
        created += body.summary.created
        if (body.summary.created !== batchSize)
          failures.push(
            `a batch created ${body.summary.created} of ${batchSize}: ${JSON.stringify(body.summary)}`,
          )
      })
      .catch((err: unknown) => {
        failures.push(`a batch failed: ${(err as Error).message}`)
      })
      .finally(() => inFlight.delete(p))
    inFlight.add(p)
  }

  const tick = (k: number) => {
    if (stopped) return
    const dueAt = started + k * intervalMs
    send(dueAt)
    timer = setTimeout(() => tick(k + 1), Math.max(0, started + (k + 1) * intervalMs - performance.now()))
  }
  tick(0)

  return {
    async stop() {
      stopped = true
      clearTimeout(timer)
      await Promise.all(inFlight)
      return { latenciesMs, batches, created, failures, seconds: (performance.now() - started) / 1000 }
    },
  }
}

/** A trickle with nothing else running, for `seconds`: the baseline. */
export async function trickleAlone(
  options: Parameters<typeof startTrickle>[0],
  seconds: number,
): Promise<TrickleResult> {
  const trickle = startTrickle(options)
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
  return trickle.stop()
}
