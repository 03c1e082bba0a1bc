import type { DeviceLink } from './device-link.js'
import type { ScriptedPunch } from './punch-script.js'
import type { SimulationReport } from './simulation-report.js'

/** How punches follow each other. */
export type Pace =
  /** One after another, each once the one before is delivered. */
  | { kind: 'burst' }
  /** A gap of `seconds` ±50% (at random) after each delivered punch: a demo that looks alive. */
  | { kind: 'every'; seconds: number }
  /** `perSecond` punches a second, up to that many in flight at once: a load test. */
  | { kind: 'rate'; perSecond: number }

/** mqtt.js numbers QoS 1 packets 1..65535; more in flight would wait for a free number anyway. */
const MAX_IN_FLIGHT = 65_000
/** How long a stopped run waits for punches in flight before it gives up on them. */
const DEFAULT_STOP_GRACE_MS = 10_000
const PROGRESS_EVERY_MS = 5_000

interface SimulationOptions {
  link: DeviceLink
  script: { next(): ScriptedPunch }
  toRecord: (punch: ScriptedPunch) => string
  pace: Pace
  /** Punches to send; undefined: until `stop`. */
  count: number | undefined
  report: SimulationReport
  /** Stop making punches (SIGINT, SIGTERM): those in flight are waited for, `stopGraceMs` at most. */
  stop: AbortSignal
  /** Stop waiting for punches in flight (a second SIGINT). */
  giveUp: AbortSignal
  /** Messages for the person watching (stderr). */
  notice: (message: string) => void
  random?: () => number
  stopGraceMs?: number
  /** A progress line this often when the report has no line per punch. */
  progressEveryMs?: number
}

interface SimulationResult {
  sent: number
  acknowledged: number
  /** Why the run ended early, when a punch could not be delivered (the serial port went away). */
  failure: Error | undefined
}

/**
 * The simulated device's run: makes punches at the pace asked, hands them to the link,
 * counts what is delivered, and ends when `count` is reached, a punch cannot be delivered, or it is
 * stopped. It never leaves a punch behind silently: punches still in flight at the end are waited
 * for, and those given up on are counted as not delivered.
 */
export async function runSimulation(options: SimulationOptions): Promise<SimulationResult> {
  const { link, pace, report, stop, giveUp } = options
  const random = options.random ?? Math.random
  const window = pace.kind === 'rate' ? Math.min(MAX_IN_FLIGHT, Math.max(1, Math.ceil(pace.perSecond))) : 1
  const limit = options.count ?? Number.POSITIVE_INFINITY
  const pending = new Set<Promise<void>>()
  let failure: Error | undefined
  let graceOver = false
  let wake: (() => void) | undefined
  const poke = () => {
    wake?.()
    wake = undefined
  }
  const settled = () => new Promise<void>((resolve) => (wake = resolve))

  let graceTimer: NodeJS.Timeout | undefined
  const onStop = () => {
    if (pending.size > 0)
      options.notice(
        `stopping: waiting for ${pending.size} punch(es) in flight; Ctrl-C again gives up on them`,
      )
    graceTimer = setTimeout(() => {
      graceOver = true
      poke()
    }, options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS)
    poke()
  }
  if (stop.aborted) onStop()
  else stop.addEventListener('abort', onStop, { once: true })
  giveUp.addEventListener('abort', poke, { once: true })
  const progressTimer = report.perPunch
    ? undefined
    : setInterval(() => report.progress(), options.progressEveryMs ?? PROGRESS_EVERY_MS)

  const startedAt = performance.now()
  try {
    for (let sent = 0; sent < limit && !stop.aborted && !failure; sent++) {
      if (pace.kind === 'rate')
        await sleep(startedAt + (sent * 1000) / pace.perSecond - performance.now(), stop)
      else if (pace.kind === 'every' && sent > 0) await sleep(pace.seconds * 1000 * (0.5 + random()), stop)
      while (pending.size >= window && !stop.aborted && !failure) await settled()
      if (stop.aborted || failure) break
      const punch = options.script.next()
      report.punchSent()
      const delivery = link.send(options.toRecord(punch)).then(
        () => report.punchDelivered(punch),
        (err: Error) => {
          failure ??= err
          report.punchFailed(punch, err)
        },
      )
      pending.add(delivery)
      void delivery.finally(() => {
        pending.delete(delivery)
        poke()
      })
    }
    while (pending.size > 0 && !giveUp.aborted && !graceOver) await settled()
  } finally {
    clearInterval(progressTimer)
    clearTimeout(graceTimer)
    stop.removeEventListener('abort', onStop)
    giveUp.removeEventListener('abort', poke)
    await link.close()
    await Promise.allSettled([...pending])
  }
  return { sent: report.sent, acknowledged: report.acknowledged, failure }
}

/** Waits `ms` (nothing when not positive), or less when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve()
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })
}
