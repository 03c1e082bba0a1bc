import { nowMicros } from '../../shared/time.js'

/** One punch the simulated device makes: who, which way, and when (µs since the epoch). */
export interface ScriptedPunch {
  employeeCode: string
  punchType: 'IN' | 'OUT'
  at: number
}

interface PunchScriptOptions {
  employees: readonly string[]
  /**
   * The smallest step between two times the record format can write (1 s for ATTLOG and CSV, 1 ms
   * for JSON): two punches of one employee are always at least this far apart.
   */
  resolutionMicros: number
  /** µs; the clock by default. */
  now?: () => number
  random?: () => number
}

const SECOND = 1_000_000

interface EmployeeState {
  next: 'IN' | 'OUT'
  /** The earliest time this employee's next punch may have: one step after the last. */
  notBefore: number
}

/**
 * Which punch the simulated device makes next (`hajri-agent simulate`): an employee picked at random,
 * alternating IN, OUT, IN... per employee, dated now (to the whole second, as a terminal shows it;
 * docs/decisions/0061-simulator-punch-times.md).
 *
 * The agent's punch id is a hash of (device, employee, instant, direction) (docs/decisions/0025-punch-id.md),
 * so two punches of one employee in the same second and direction would be one punch to the agent and the
 * cloud, and a load test would count punches that are not there. So each employee's punches are
 * strictly later than the one before: an employee who already punched in this second is dated a
 * step later (a millisecond in JSON, a second in formats that only have seconds), and employees
 * that can punch now without that are preferred. A run that needs more distinct times than the clock gives is refused before it starts
 * (see `punchLeadMicros`).
 */
export class PunchScript {
  private readonly states = new Map<string, EmployeeState>()
  private readonly employees: readonly string[]
  private readonly now: () => number
  private readonly random: () => number

  constructor(private readonly options: PunchScriptOptions) {
    if (options.employees.length === 0) throw new Error('a punch script needs at least one employee')
    this.employees = [...new Set(options.employees)]
    this.now = options.now ?? nowMicros
    this.random = options.random ?? Math.random
    for (const code of this.employees) this.states.set(code, { next: 'IN', notBefore: 0 })
  }

  next(): ScriptedPunch {
    const now = this.now()
    const employeeCode = this.pick(now)
    const state = this.states.get(employeeCode) as EmployeeState
    const at = Math.max(Math.floor(now / SECOND) * SECOND, state.notBefore)
    const punch: ScriptedPunch = { employeeCode, punchType: state.next, at }
    state.next = state.next === 'IN' ? 'OUT' : 'IN'
    state.notBefore = at + this.options.resolutionMicros
    return punch
  }

  /**
   * A random employee who can punch at the current whole second; else one who can punch now (a
   * fraction of a second on, in JSON); else the one who can punch soonest. A demo's times stay whole
   * seconds, and fractions or times ahead appear only when there are more punches than that.
   */
  private pick(now: number): string {
    const second = Math.floor(now / SECOND) * SECOND
    const notBefore = (code: string) => (this.states.get(code) as EmployeeState).notBefore
    const any = this.employees[Math.floor(this.random() * this.employees.length)] as string
    if (notBefore(any) <= second) return any
    for (const limit of [second, now]) {
      const ready = this.employees.filter((code) => notBefore(code) <= limit)
      if (ready.length > 0) return ready[Math.floor(this.random() * ready.length)] as string
    }
    return this.employees.reduce((soonest, code) => (notBefore(code) < notBefore(soonest) ? code : soonest))
  }
}

/**
 * How far ahead of the clock a run must date its last punch, at the least, to give every punch of
 * an employee its own time (µs; Infinity when it falls further behind for as long as it runs).
 * `count` undefined: the run goes on until stopped. `perSecond` undefined: as fast as the link takes
 * them, counted here as all at once.
 */
export function punchLeadMicros(run: {
  employees: number
  resolutionMicros: number
  count?: number
  perSecond?: number
}): number {
  const timesPerSecond = (run.employees * SECOND) / run.resolutionMicros
  if (run.count === undefined)
    return run.perSecond !== undefined && run.perSecond > timesPerSecond ? Infinity : 0
  const busiest = Math.ceil(run.count / run.employees)
  const needed = (busiest - 1) * run.resolutionMicros
  const takes = run.perSecond === undefined ? 0 : ((run.count - 1) / run.perSecond) * SECOND
  return Math.max(0, needed - takes)
}
