import { describe, expect, it } from 'vitest'
import type { DevicePunch } from '../../../agent/punch/device-punch.js'
import {
  applyPinRule,
  DEFAULT_STATUS_MAP,
  type NormalizeContext,
  normalizePunch,
} from '../../../agent/punch/normalize.js'
import { punchId } from '../../../agent/punch/punch-id.js'
import type { SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import { parseTimestamp } from '../../../shared/time.js'

/** µs of an RFC 3339 time written in the test (a typo fails here, not as a puzzling mismatch). */
function at(text: string): number {
  const micros = parseTimestamp(text)
  if (micros === undefined) throw new Error(`bad time in test: ${text}`)
  return micros
}

const MINUTE = 60_000_000

/** The agent's clock: 21 November 2026, 10:00 in Pune. */
const NOW = at('2026-11-21T04:30:00Z')

function context(overrides: Partial<NormalizeContext> = {}): NormalizeContext {
  return {
    deviceId: 'gate-1',
    timeZone: 'Asia/Kolkata',
    clockFloor: at('2020-01-01T00:00:00Z'),
    now: NOW,
    ...overrides,
  }
}

/** The punch of a record that must normalize. */
function ok(record: DevicePunch, ctx: NormalizeContext = context()): SpooledPunch {
  const result = normalizePunch(record, ctx)
  if (!result.ok) throw new Error(`expected a punch, got ${result.reason}: ${result.detail}`)
  return result.punch
}

describe('punch time', () => {
  it("reads a device's local time in the site zone (Asia/Kolkata) and writes it with its offset", () => {
    const punch = ok({ employeeCode: 'E001', punchType: 'IN', punchedAt: '2026-11-21 09:00:00' })
    expect(punch.punchedAt).toBe('2026-11-21T09:00:00+05:30')
    expect(parseTimestamp(punch.punchedAt)).toBe(at('2026-11-21T03:30:00Z'))
  })

  it("reads a device's local time in the device's own zone when it has one", () => {
    const punch = ok(
      { employeeCode: 'E001', punchType: 'IN', punchedAt: '2026-11-21 08:00:00' },
      context({ timeZone: 'Asia/Dubai' }),
    )
    expect(punch.punchedAt).toBe('2026-11-21T08:00:00+04:00')
    expect(parseTimestamp(punch.punchedAt)).toBe(at('2026-11-21T04:00:00Z'))
  })

  it('gives a zone with daylight saving the offset of the date, on both sides of the change', () => {
    const newYork = context({ timeZone: 'America/New_York', now: at('2026-12-01T00:00:00Z') })
    const local = (punchedAt: string) => ok({ employeeCode: 'E001', punchType: 'IN', punchedAt }, newYork)
    expect(local('2026-07-01 09:00:00').punchedAt).toBe('2026-07-01T09:00:00-04:00')
    expect(local('2026-11-20 09:00:00').punchedAt).toBe('2026-11-20T09:00:00-05:00')
    // The days of the changes themselves (8 March and 1 November 2026), before and after 02:00.
    expect(local('2026-03-08 01:30:00').punchedAt).toBe('2026-03-08T01:30:00-05:00')
    expect(local('2026-03-08 03:30:00').punchedAt).toBe('2026-03-08T03:30:00-04:00')
    expect(local('2026-11-01 00:30:00').punchedAt).toBe('2026-11-01T00:30:00-04:00')
    expect(local('2026-11-01 02:30:00').punchedAt).toBe('2026-11-01T02:30:00-05:00')
  })

  it('writes what it stores as the instant it names, even in the hour a DST change repeats', () => {
    // 01:30 happens twice on 1 November in New York; whichever is chosen, the text and the id agree.
    const ctx = context({ timeZone: 'America/New_York', now: at('2026-12-01T00:00:00Z') })
    const punch = ok({ employeeCode: 'E001', punchType: 'IN', punchedAt: '2026-11-01 01:30:00' }, ctx)
    expect(['2026-11-01T01:30:00-04:00', '2026-11-01T01:30:00-05:00']).toContain(punch.punchedAt)
    expect(punch.id).toBe(punchId('gate-1', 'E001', at(punch.punchedAt), 'IN'))
  })

  it('keeps an RFC 3339 time as the same instant, written in the device zone', () => {
    for (const written of [
      '2026-11-21T09:00:00+05:30',
      '2026-11-21T03:30:00Z',
      '2026-11-21T03:30:00.000z',
      '2026-11-20T22:30:00-05:00',
    ]) {
      const punch = ok({ employeeCode: 'E001', punchType: 'IN', punchedAt: written })
      expect(punch.punchedAt, written).toBe('2026-11-21T09:00:00+05:30')
    }
  })

  it('keeps the fraction of a second of an RFC 3339 time', () => {
    const punch = ok({ employeeCode: 'E001', punchType: 'IN', punchedAt: '2026-11-21T03:30:00.25Z' })
    expect(punch.punchedAt).toBe('2026-11-21T09:00:00.250+05:30')
    expect(parseTimestamp(punch.punchedAt)).toBe(at('2026-11-21T03:30:00Z') + 250_000)
  })

  it('takes the time of receipt for a punch without one', () => {
    const punch = ok({ employeeCode: 'E001', punchType: 'OUT' })
    expect(punch.punchedAt).toBe('2026-11-21T10:00:00+05:30')
    expect(punch.receivedAt).toBe('2026-11-21T04:30:00.000000Z')
    expect(punch.id).toBe(punchId('gate-1', 'E001', NOW, 'OUT'))
  })

  it('stamps every punch with the time of receipt, in UTC', () => {
    const punch = ok({ employeeCode: 'E001', punchType: 'IN', punchedAt: '2026-11-21 09:00:00' })
    expect(punch.receivedAt).toBe('2026-11-21T04:30:00.000000Z')
  })

  it('parks a time that is not one as invalid_punch, keeping a piece of it', () => {
    for (const punchedAt of ['yesterday', '2026-02-30 09:00:00', '2026-11-21 9:00:00', '21/11/2026 09:00']) {
      const result = normalizePunch({ employeeCode: 'E001', punchType: 'IN', punchedAt }, context())
      expect(result, punchedAt).toMatchObject({ ok: false, reason: 'invalid_punch' })
      expect(result.ok ? '' : result.detail).toContain(punchedAt)
    }
  })
})

describe('punch type', () => {
  it('maps ZKTeco status codes 0..5 by default unless told otherwise', () => {
    expect(DEFAULT_STATUS_MAP).toEqual({
      '0': 'IN',
      '1': 'OUT',
      '2': 'OUT',
      '3': 'IN',
      '4': 'IN',
      '5': 'OUT',
    })
    const types = ['0', '1', '2', '3', '4', '5'].map(
      (status) => ok({ employeeCode: 'E001', status, punchedAt: '2026-11-21 09:00:00' }).punchType,
    )
    // check-in, check-out, break-out, break-in, overtime-in, overtime-out
    expect(types).toEqual(['IN', 'OUT', 'OUT', 'IN', 'IN', 'OUT'])
  })

  it("uses a device's own statusMap instead of the default, not on top of it", () => {
    const ctx = context({ statusMap: { '0': 'OUT', '7': 'IN' } })
    expect(ok({ employeeCode: 'E001', status: '0' }, ctx).punchType).toBe('OUT')
    expect(ok({ employeeCode: 'E001', status: '7' }, ctx).punchType).toBe('IN')
    expect(normalizePunch({ employeeCode: 'E001', status: '1' }, ctx)).toMatchObject({
      ok: false,
      reason: 'status_unmapped',
    })
  })

  it('parks a status no map knows as status_unmapped, with no punch to replay', () => {
    const result = normalizePunch({ employeeCode: 'E001', status: '9' }, context())
    expect(result).toEqual({
      ok: false,
      reason: 'status_unmapped',
      detail: "status 9 is not in the device's statusMap",
    })
  })

  it('takes the punch type of a record that says it, over its status', () => {
    expect(ok({ employeeCode: 'E001', punchType: 'OUT', status: '0' }).punchType).toBe('OUT')
  })

  it('gives every punch of an entry-only reader its fixed type, whatever the record says', () => {
    const entry = context({ fixedPunchType: 'IN' })
    expect(ok({ employeeCode: 'E001', status: '1' }, entry).punchType).toBe('IN')
    expect(ok({ employeeCode: 'E001', status: '99' }, entry).punchType).toBe('IN')
    expect(ok({ employeeCode: 'E001', punchType: 'OUT' }, entry).punchType).toBe('IN')
    expect(ok({ employeeCode: 'E001' }, entry).punchType).toBe('IN')
    // The id is made with the type stored, so the reader's punches are IN punches in the cloud too.
    expect(ok({ employeeCode: 'E001', status: '1' }, entry).id).toBe(punchId('gate-1', 'E001', NOW, 'IN'))
  })

  it('parks a record with neither a type nor a status as invalid_punch', () => {
    expect(normalizePunch({ employeeCode: 'E001' }, context())).toMatchObject({
      ok: false,
      reason: 'invalid_punch',
    })
  })

  it('parks an employee code Hajri would refuse as invalid_punch', () => {
    for (const employeeCode of ['', ' E001', 'E 001', '-E001', 'x'.repeat(65)]) {
      expect(normalizePunch({ employeeCode, punchType: 'IN' }, context()), employeeCode).toMatchObject({
        ok: false,
        reason: 'invalid_punch',
      })
    }
  })
})

describe('an implausible device clock', () => {
  it('parks a punch dated before the clock floor as device_clock_invalid, with the punch attached', () => {
    // 31 Dec 2019 23:59:59 in Pune is 18:29:59 UTC: before a floor of 1 Jan 2020 00:00 UTC.
    const result = normalizePunch(
      { employeeCode: 'E001', status: '0', punchedAt: '2019-12-31 23:59:59' },
      context(),
    )
    expect(result).toMatchObject({ ok: false, reason: 'device_clock_invalid' })
    if (result.ok) return
    expect(result.punch).toEqual({
      id: punchId('gate-1', 'E001', at('2019-12-31T18:29:59Z'), 'IN'),
      deviceId: 'gate-1',
      employeeCode: 'E001',
      punchType: 'IN',
      punchedAt: '2019-12-31T23:59:59+05:30',
      receivedAt: '2026-11-21T04:30:00.000000Z',
    })
    // The detail shows both clocks, for the operator who has to set the device right.
    expect(result.detail).toContain('2019-12-31T23:59:59+05:30')
    expect(result.detail).toContain('2026-11-21T10:00:00+05:30')
  })

  it('takes a punch dated exactly at the floor', () => {
    const floor = at('2020-01-01T00:00:00Z')
    expect(
      normalizePunch({ employeeCode: 'E001', punchType: 'IN', punchedAt: '2020-01-01T00:00:00Z' }, context())
        .ok,
    ).toBe(true)
    expect(
      normalizePunch(
        { employeeCode: 'E001', punchType: 'IN', punchedAt: '2019-12-31T23:59:59.999999Z' },
        context({ clockFloor: floor }),
      ).ok,
    ).toBe(false)
  })

  it('follows the configured floor, not a built-in one', () => {
    const ctx = context({ clockFloor: at('2026-01-01T00:00:00Z') })
    expect(
      normalizePunch({ employeeCode: 'E001', punchType: 'IN', punchedAt: '2025-12-31 09:00:00' }, ctx),
    ).toMatchObject({
      ok: false,
      reason: 'device_clock_invalid',
    })
    expect(
      normalizePunch({ employeeCode: 'E001', punchType: 'IN', punchedAt: '2026-01-01 09:00:00' }, ctx).ok,
    ).toBe(true)
  })

  it('takes a punch up to five minutes ahead of the agent, and parks one a second further', () => {
    const ahead = (micros: number) =>
      normalizePunch(
        { employeeCode: 'E001', punchType: 'IN', punchedAt: new Date(micros / 1000).toISOString() },
        context(),
      )
    expect(ahead(NOW + 5 * MINUTE).ok).toBe(true)
    const parked = ahead(NOW + 5 * MINUTE + 1_000_000)
    expect(parked).toMatchObject({
      ok: false,
      reason: 'device_clock_invalid',
      punch: { punchedAt: '2026-11-21T10:05:01+05:30', employeeCode: 'E001', punchType: 'IN' },
    })
  })

  it('parks a device local time from next year, read in its zone', () => {
    const result = normalizePunch(
      { employeeCode: 'E001', status: '1', punchedAt: '2027-11-21 09:00:00' },
      context(),
    )
    expect(result).toMatchObject({
      ok: false,
      reason: 'device_clock_invalid',
      punch: { punchedAt: '2027-11-21T09:00:00+05:30', punchType: 'OUT' },
    })
  })
})

describe('PIN to employee code', () => {
  it('pads numeric PINs with zeros to the width, then puts the prefix in front', () => {
    const rule = { prefix: 'E', width: 4 }
    expect(applyPinRule('42', rule)).toBe('E0042')
    expect(applyPinRule('0042', rule)).toBe('E0042')
    expect(applyPinRule('123456', rule)).toBe('E123456')
    // Not a number: nothing to pad, the prefix still applies.
    expect(applyPinRule('A12', rule)).toBe('EA12')
    expect(applyPinRule('42', { width: 6 })).toBe('000042')
    expect(applyPinRule('42', { prefix: 'EMP-' })).toBe('EMP-42')
    expect(applyPinRule('42', undefined)).toBe('42')
  })

  it("makes the punch's code and identity from the code, not the PIN", () => {
    const punch = ok(
      { employeeCode: '42', status: '0', punchedAt: '2026-11-21 09:00:00' },
      context({ pin: { prefix: 'E', width: 4 } }),
    )
    expect(punch.employeeCode).toBe('E0042')
    expect(punch.id).toBe(punchId('gate-1', 'E0042', at('2026-11-21T09:00:00+05:30'), 'IN'))
  })

  it('checks the code it makes, so a rule cannot make a code Hajri would refuse', () => {
    const result = normalizePunch(
      { employeeCode: '9'.repeat(60), status: '0', punchedAt: '2026-11-21 09:00:00' },
      context({ pin: { prefix: 'EMPLOYEE-' } }),
    )
    expect(result).toMatchObject({ ok: false, reason: 'invalid_punch' })
  })
})
