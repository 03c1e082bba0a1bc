/**
 * The oracle of the serial and MQTT fuzz tests must be able to fail: a spooled punch the cloud would
 * refuse, whose id is not its hash or whose time is implausible, and a dead letter that keeps
 * neither its punch nor its frame, are reported; what the intake makes of a good record is not.
 */
import { describe, expect, it } from 'vitest'
import { normalizePunch } from '../../../agent/punch/normalize.js'
import type { DeadLetter, SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import { parseTimestamp } from '../../../shared/time.js'
import { deadLetterProblems, type RecordContext, spooledPunchProblems } from './spooled-record-checks.js'

const NOW = parseTimestamp('2026-11-21T12:00:00+05:30') as number
const context: RecordContext = {
  deviceIds: ['gate-1'],
  now: () => NOW,
  clockFloor: parseTimestamp('2020-01-01T00:00:00Z') as number,
}

function good(): SpooledPunch {
  const made = normalizePunch(
    { employeeCode: 'E001', punchType: 'IN', punchedAt: '2026-11-21 09:00:00' },
    { deviceId: 'gate-1', timeZone: 'Asia/Kolkata', clockFloor: context.clockFloor, now: NOW },
  )
  if (!made.ok) throw new Error(made.detail)
  return made.punch
}

describe('spooled record checks', () => {
  it('pass what the intake makes of a good record', () => {
    expect(spooledPunchProblems(good(), context)).toEqual([])
  })

  it('report a punch the cloud would refuse, a wrong id, an implausible time, an unknown device', () => {
    expect(spooledPunchProblems({ ...good(), employeeCode: 'É1' }, context)).toEqual([
      expect.stringMatching(/the cloud would refuse it/),
      expect.stringMatching(/its id is not the hash/),
    ])
    expect(spooledPunchProblems({ ...good(), id: 'hjp_0' }, context)).toEqual([
      expect.stringMatching(/its id is not the hash/),
    ])
    const future = { ...good(), punchedAt: '2026-11-21T13:00:00+05:30' }
    expect(spooledPunchProblems(future, context)).toEqual(
      expect.arrayContaining([expect.stringMatching(/outside the plausible window/)]),
    )
    expect(spooledPunchProblems({ ...good(), deviceId: 'gate-2' }, context)).toEqual(
      expect.arrayContaining([expect.stringMatching(/an unknown device/)]),
    )
    expect(spooledPunchProblems({ ...good(), punchedAt: '2026-11-21 09:00:00' }, context)).toEqual(
      expect.arrayContaining([expect.stringMatching(/the cloud would refuse it/)]),
    )
  })

  it('report a dead letter without its punch or frame, or with more than 1,024 characters of it', () => {
    const entry: DeadLetter = {
      id: 'dlt_01JBZ6Y2RQ85JBK7SD0QYTR420',
      at: '2026-11-21T06:30:00.000Z',
      deviceId: 'gate-1',
      reason: 'malformed_frame',
      detail: 'not a record',
      raw: 'x',
    }
    expect(deadLetterProblems(entry, context)).toEqual([])
    expect(deadLetterProblems({ ...entry, raw: undefined }, context)).toEqual([
      expect.stringMatching(/neither a punch nor the frame/),
    ])
    expect(deadLetterProblems({ ...entry, raw: 'x'.repeat(1025) }, context)).toEqual([
      expect.stringMatching(/at most 1,024 characters/),
    ])
  })
})
