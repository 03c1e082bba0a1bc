import { expect, it } from 'vitest'
import { parseTimestamp } from '../../../../shared/time.js'
import { bearer, describeEachDatabase, employee } from '../../../support/cloud-harness.js'

// Once payroll closes a period its days never change: a late punch is kept in the log and flagged
// on its day, a day first made inside the period is made locked, and a void that could not take
// effect is refused (docs/decisions/0085-attendance-days-are-a-pure-function.md).

const API = '/api/public/v1/attendance'
const at = (text: string) => parseTimestamp(text) as number

describeEachDatabase('locking a payroll period', (cloud) => {
  it('keeps locked days as payroll saw them, flags late punches on them, and refuses what cannot apply', async () => {
    cloud.fixedNow = at('2026-10-01T08:00:00+05:30')
    const tenantId = await cloud.createTenant({ timeZone: 'Asia/Kolkata' })
    const key = await cloud.createApiKey(tenantId, [
      'attendance:read',
      'attendance:write',
      'attendance:admin',
    ])
    const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
      cloud.app.inject({ method, url: `${API}${url}`, headers: bearer(key), ...(payload ? { payload } : {}) })
    const punch = (code: string, punchType: 'IN' | 'OUT', punchedAt: string) =>
      call('POST', '/punches', {
        employeeCode: code,
        punchType,
        punchedAt,
        externalId: `${code}-${punchedAt}`,
      })
    await cloud.upsertEmployees(tenantId, [employee('L1'), employee('L2')])
    await call('POST', '/shifts', { code: 'GEN', start: '09:00', end: '18:00', unpaidBreakMinutes: 60 })
    await call('POST', '/assignments', { shiftCode: 'GEN', effectiveFrom: '2026-10-01' })
    await cloud.attendanceRounds()
    cloud.fixedNow = at('2026-10-01T19:00:00+05:30')
    const inPunch = await punch('L1', 'IN', '2026-10-01T09:00:00+05:30')
    expect(inPunch.statusCode).toBe(201)
    expect((await punch('L1', 'OUT', '2026-10-01T18:00:00+05:30')).statusCode).toBe(201)
    await cloud.attendanceRounds()

    // A period that has not ended cannot be locked.
    cloud.fixedNow = at('2026-10-02T12:00:00+05:30')
    await cloud.attendanceRounds()
    const early = await call('POST', '/lock', { from: '2026-10-01', to: '2026-10-02' })
    expect(early.statusCode).toBe(409)
    expect(early.json().code).toBe('days_not_final')

    cloud.fixedNow = at('2026-10-03T12:00:00+05:30')
    await cloud.attendanceRounds()
    const lock = await call('POST', '/lock', { from: '2026-10-01', to: '2026-10-02' })
    expect(lock.statusCode, lock.body).toBe(200)
    expect(lock.json().locked).toBe(4)
    const locked = (await call('GET', '/days/L1/2026-10-01')).json()
    expect(locked).toMatchObject({ state: 'LOCKED', status: 'PRESENT', workedMinutes: 480, revision: 2 })

    // A punch for a locked day is kept and flagged; the figures stay.
    expect((await punch('L1', 'OUT', '2026-10-01T20:00:00+05:30')).statusCode).toBe(201)
    // A punch for a day the period never had (L2 on the 2nd, had it been removed) is the same: here
    // L2's locked ABSENT day gets the flag and keeps its status.
    expect((await punch('L2', 'IN', '2026-10-02T09:00:00+05:30')).statusCode).toBe(201)
    await cloud.attendanceRounds()
    const after = (await call('GET', '/days/L1/2026-10-01')).json()
    expect(after).toMatchObject({ state: 'LOCKED', status: 'PRESENT', workedMinutes: 480, revision: 2 })
    expect(after.flags).toContain('PUNCH_AFTER_LOCK')
    const l2 = (await call('GET', '/days/L2/2026-10-02')).json()
    expect(l2).toMatchObject({ state: 'LOCKED', status: 'ABSENT', revision: 1 })
    expect(l2.flags).toContain('PUNCH_AFTER_LOCK')

    // A void of a punch that counts on a locked day is refused; the log and the day are untouched.
    const voided = await call('POST', `/punches/${inPunch.json().id}/void`, { reason: 'wrong employee' })
    expect(voided.statusCode).toBe(409)
    expect(voided.json().code).toBe('day_locked')
    expect((await call('GET', '/corrections')).json().data).toEqual([])

    // An employee added later who punched inside the closed period gets a day made locked, as
    // payroll saw it: no punches, the late ones counted.
    await cloud.upsertEmployees(tenantId, [employee('L3')])
    expect((await punch('L3', 'IN', '2026-10-02T09:00:00+05:30')).statusCode).toBe(201)
    await cloud.attendanceRounds()
    const l3 = (await call('GET', '/days/L3/2026-10-02')).json()
    expect(l3).toMatchObject({ state: 'LOCKED', status: 'ABSENT', workedMinutes: 0, punches: [] })
    expect(l3.flags).toContain('PUNCH_AFTER_LOCK')
  })
})
