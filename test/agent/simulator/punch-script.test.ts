/**
 * Which punch the simulated device makes next (docs/decisions/0061-simulator-punch-times.md). Each employee
 * alternates IN, OUT, IN... from IN; employees are picked at random; and no two punches of one employee share
 * a time, so the agent's punch id (a hash of device, employee, instant and direction) never makes two punches
 * one.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { punchId } from '../../../agent/punch/punch-id.js'
import { PunchScript, punchLeadMicros, type ScriptedPunch } from '../../../agent/simulator/punch-script.js'
import { parseTimestamp } from '../../../shared/time.js'

const SECOND = 1_000_000
const T0 = parseTimestamp('2026-11-21T09:00:00+05:30')!

function run(script: PunchScript, n: number): ScriptedPunch[] {
  return Array.from({ length: n }, () => script.next())
}

function byEmployee(punches: ScriptedPunch[]): Map<string, ScriptedPunch[]> {
  const out = new Map<string, ScriptedPunch[]>()
  for (const p of punches) out.set(p.employeeCode, [...(out.get(p.employeeCode) ?? []), p])
  return out
}

describe('PunchScript', () => {
  it('alternates IN and OUT per employee, from IN, with each punch later than that employee’s last', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^E\d{3}$/), { minLength: 1, maxLength: 8 }),
        fc.array(fc.integer({ min: 0, max: 3 * SECOND }), { minLength: 1, maxLength: 200 }),
        fc.constantFrom(1_000, SECOND),
        fc.integer(),
        (employees, steps, resolutionMicros, seed) => {
          let now = T0 + 123_456
          let i = 0
          const random = fc.sample(fc.double({ min: 0, max: 0.999999, noNaN: true }), {
            numRuns: steps.length * 2,
            seed,
          })
          const script = new PunchScript({
            employees,
            resolutionMicros,
            now: () => now,
            random: () => random[i++ % random.length]!,
          })
          const punches = steps.map((step) => {
            now += step
            return script.next()
          })
          for (const [code, own] of byEmployee(punches)) {
            expect(employees).toContain(code)
            own.forEach((p, k) => {
              expect(p.punchType).toBe(k % 2 === 0 ? 'IN' : 'OUT')
              if (k > 0) expect(p.at - own[k - 1]!.at).toBeGreaterThanOrEqual(resolutionMicros)
              expect(p.at % resolutionMicros).toBe(0)
            })
          }
          const ids = punches.map((p) => punchId('simulator', p.employeeCode, p.at, p.punchType))
          expect(new Set(ids).size).toBe(punches.length)
        },
      ),
      { numRuns: 200 },
    )
  })

  it('dates a punch now, to the whole second, when the employee has not punched this second', () => {
    const now = T0 + 987_654
    const script = new PunchScript({ employees: ['E001', 'E002'], resolutionMicros: 1000, now: () => now })
    const [first, second, third] = run(script, 3)
    // Both employees at the whole second first; only then a fraction of a second on.
    expect([first?.at, second?.at]).toEqual([T0, T0])
    expect(first?.employeeCode).not.toBe(second?.employeeCode)
    expect(third?.at).toBe(T0 + 1000)
    expect(third?.punchType).toBe('OUT')
  })

  it('picks among all employees at random, preferring those free to punch this second', () => {
    let now = T0
    const script = new PunchScript({
      employees: ['E001', 'E002', 'E003', 'E004'],
      resolutionMicros: SECOND,
      now: () => now,
    })
    // Four punches in one second in a format with whole seconds: one each, none dated ahead.
    const second = run(script, 4)
    expect(second.map((p) => p.employeeCode).sort()).toEqual(['E001', 'E002', 'E003', 'E004'])
    expect(second.every((p) => p.at === T0)).toBe(true)
    // A fifth must go a second ahead: the employee free soonest.
    expect(script.next().at).toBe(T0 + SECOND)
    now += 10 * SECOND
    const counts = new Map<string, number>()
    for (let k = 0; k < 4000; k++) {
      now += SECOND
      const p = script.next()
      counts.set(p.employeeCode, (counts.get(p.employeeCode) ?? 0) + 1)
      expect(p.at).toBeLessThanOrEqual(now)
    }
    // Math.random: each of four employees gets about a thousand; 700 is far outside chance.
    for (const code of ['E001', 'E002', 'E003', 'E004']) expect(counts.get(code)).toBeGreaterThan(700)
  })
})

describe('punchLeadMicros', () => {
  it('is 0 while the employees have times enough, and Infinity for an endless run that outpaces them', () => {
    expect(punchLeadMicros({ employees: 5, resolutionMicros: SECOND, perSecond: 5 })).toBe(0)
    expect(punchLeadMicros({ employees: 5, resolutionMicros: SECOND, perSecond: 6 })).toBe(Infinity)
    expect(punchLeadMicros({ employees: 5, resolutionMicros: 1000, perSecond: 5000 })).toBe(0)
    expect(punchLeadMicros({ employees: 5, resolutionMicros: SECOND })).toBe(0)
  })

  it('is how far ahead a counted run must date its last punch', () => {
    // 100 punches of 5 employees at once: 20 each, the last 19 s ahead.
    expect(punchLeadMicros({ employees: 5, resolutionMicros: SECOND, count: 100 })).toBe(19 * SECOND)
    // The same over 99 s: each employee's punches fit their seconds.
    expect(punchLeadMicros({ employees: 5, resolutionMicros: SECOND, count: 100, perSecond: 1 })).toBe(0)
    expect(punchLeadMicros({ employees: 1, resolutionMicros: 1000, count: 1 })).toBe(0)
  })

  it('matches what a script does when every punch comes at once', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 300 }), (employees, count) => {
        const codes = Array.from({ length: employees }, (_, k) => `E${k}`)
        const script = new PunchScript({ employees: codes, resolutionMicros: SECOND, now: () => T0 })
        const last = Math.max(...run(script, count).map((p) => p.at))
        expect(last - T0).toBe(punchLeadMicros({ employees, resolutionMicros: SECOND, count }))
      }),
    )
  })
})
