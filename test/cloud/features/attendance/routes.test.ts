import { beforeAll, expect, it } from 'vitest'
import { parseTimestamp } from '../../../../shared/time.js'
import { bearer, describeEachDatabase, employee } from '../../../support/cloud-harness.js'

const API = '/api/public/v1/attendance'

describeEachDatabase('attendance API', (cloud) => {
  let tenantId: string
  let admin: string
  let reader: string
  let writer: string

  const call = (key: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    cloud.app.inject({ method, url: `${API}${url}`, headers: bearer(key), ...(payload ? { payload } : {}) })

  beforeAll(async () => {
    cloud.fixedNow = parseTimestamp('2026-11-25T12:00:00+05:30')
    tenantId = await cloud.createTenant({ timeZone: 'Asia/Kolkata' })
    admin = await cloud.createApiKey(tenantId, ['attendance:read', 'attendance:write', 'attendance:admin'])
    reader = await cloud.createApiKey(tenantId, ['attendance:read'])
    writer = await cloud.createApiKey(tenantId, ['attendance:write'])
    await cloud.upsertEmployees(tenantId, [
      employee('E1'),
      employee('E2'),
      employee('N1', { department: 'Night' }),
    ])
    expect(
      (
        await call(admin, 'POST', '/shifts', {
          code: 'GEN',
          start: '09:00',
          end: '18:00',
          unpaidBreakMinutes: 60,
        })
      ).statusCode,
    ).toBe(201)
    expect(
      (
        await call(admin, 'POST', '/shifts', {
          code: 'NIGHT',
          start: '22:00',
          end: '06:00',
          unpaidBreakMinutes: 30,
        })
      ).statusCode,
    ).toBe(201)
    expect(
      (await call(admin, 'POST', '/assignments', { shiftCode: 'GEN', effectiveFrom: '2026-11-01' }))
        .statusCode,
    ).toBe(201)
    expect(
      (
        await call(admin, 'POST', '/assignments', {
          group: 'Night',
          shiftCode: 'NIGHT',
          effectiveFrom: '2026-11-01',
        })
      ).statusCode,
    ).toBe(201)
  })

  const punch = (employeeCode: string, punchType: 'IN' | 'OUT', punchedAt: string) =>
    call(writer, 'POST', '/punches', {
      employeeCode,
      punchType,
      punchedAt,
      externalId: `${employeeCode}-${punchedAt}`,
    })

  it('turns a day’s punches into a day, and a night shift into one day on the date it starts', async () => {
    expect((await punch('E1', 'IN', '2026-11-23T09:05:00+05:30')).statusCode).toBe(201)
    expect((await punch('E1', 'OUT', '2026-11-23T18:10:00+05:30')).statusCode).toBe(201)
    expect((await punch('N1', 'IN', '2026-11-23T21:55:00+05:30')).statusCode).toBe(201)
    expect((await punch('N1', 'OUT', '2026-11-24T06:02:00+05:30')).statusCode).toBe(201)
    await cloud.attendanceRounds()
    const day = (await call(reader, 'GET', '/days/E1/2026-11-23')).json()
    expect(day).toMatchObject({
      employeeCode: 'E1',
      workDate: '2026-11-23',
      shiftCode: 'GEN',
      status: 'PRESENT',
      state: 'FINAL',
      firstIn: '2026-11-23T09:05:00+05:30',
      lastOut: '2026-11-23T18:10:00+05:30',
      workedMinutes: 485,
      lateMinutes: 5,
      revision: 1,
    })
    expect(day.explanation.length).toBeGreaterThan(0)
    const night = (await call(reader, 'GET', '/days/N1/2026-11-23')).json()
    // 22:00 (early arrival is not work) to 06:02, less the 30-minute break.
    expect(night).toMatchObject({ workDate: '2026-11-23', shiftCode: 'NIGHT', workedMinutes: 452 })
    const next = await call(reader, 'GET', '/days/N1/2026-11-24')
    if (next.statusCode === 200) expect(next.json().punches).toEqual([])
  })

  it('lists days and syncs them by updatedAt', async () => {
    const page = (await call(reader, 'GET', '/days?from=2026-11-23&to=2026-11-23')).json()
    expect(page.data.map((d: { employeeCode: string }) => d.employeeCode)).toEqual(
      ['E1', 'E2', 'N1'].filter((c) => page.data.some((d: { employeeCode: string }) => d.employeeCode === c)),
    )
    const sync = (await call(reader, 'GET', '/days?updatedSince=2026-01-01T00:00:00Z&limit=2')).json()
    expect(sync.data.length).toBeGreaterThan(0)
  })

  it('exports CSV and summarises a period', async () => {
    const csv = await call(reader, 'GET', '/days.csv?from=2026-11-01&to=2026-11-30')
    expect(csv.statusCode).toBe(200)
    expect(csv.headers['content-type']).toContain('text/csv')
    expect(csv.body.split('\r\n')[0]).toMatch(/^employeeCode,workDate/)
    expect(csv.body).toContain('E1,2026-11-23,GEN')
    const summaries = (
      await call(reader, 'GET', '/summaries?from=2026-11-01&to=2026-11-30&employeeCode=E1')
    ).json()
    expect(summaries.data[0]).toMatchObject({ employeeCode: 'E1', present: 1, workedMinutes: 485 })
  })

  it('corrects with a manual punch and a void, and audits both', async () => {
    const manual = await call(admin, 'POST', '/punches', {
      employeeCode: 'E2',
      punchType: 'IN',
      punchedAt: '2026-11-23T09:00:00+05:30',
      source: 'manual',
      reason: 'Forgot to punch; confirmed by supervisor',
    })
    expect(manual.statusCode).toBe(201)
    const noScope = await call(writer, 'POST', '/punches', {
      employeeCode: 'E2',
      punchType: 'OUT',
      punchedAt: '2026-11-23T18:00:00+05:30',
      source: 'manual',
      reason: 'x',
    })
    expect(noScope.statusCode).toBe(403)
    await cloud.attendanceRounds()
    expect((await call(reader, 'GET', '/days/E2/2026-11-23')).json()).toMatchObject({ status: 'INCOMPLETE' })
    const voided = await call(admin, 'POST', `/punches/${manual.json().id}/void`, {
      reason: 'Entered in error',
    })
    expect(voided.statusCode).toBe(200)
    await cloud.attendanceRounds()
    expect((await call(reader, 'GET', '/days/E2/2026-11-23')).json()).toMatchObject({
      status: 'ABSENT',
      revision: 2,
    })
    const corrections = (await call(reader, 'GET', '/corrections')).json()
    expect(corrections.data.map((c: { kind: string }) => c.kind)).toEqual(['void', 'manual'])
  })

  it('replays a manual punch sent again with the same Idempotency-Key, and stores it once', async () => {
    const body = {
      employeeCode: 'E1',
      punchType: 'IN',
      punchedAt: '2026-11-24T09:00:00+05:30',
      source: 'manual',
      reason: 'Terminal was down at the gate',
    }
    const send = () =>
      cloud.app.inject({
        method: 'POST',
        url: `${API}/punches`,
        headers: { ...bearer(admin), 'idempotency-key': 'manual-once-1' },
        payload: body,
      })
    const first = await send()
    const second = await send()
    expect(first.statusCode).toBe(201)
    expect(second.statusCode).toBe(201)
    expect(second.headers['idempotent-replayed']).toBe('true')
    expect(second.json().id).toBe(first.json().id)
    const corrections = (await call(reader, 'GET', '/corrections')).json().data
    expect(corrections.filter((c: { punchId: string }) => c.punchId === first.json().id)).toHaveLength(1)
  })

  it('refuses a policy whose half day would be longer than its full day, naming the field', async () => {
    const res = await call(admin, 'POST', '/policies', { fullDayMinutes: 300, halfDayMinutes: 360 })
    expect(res.statusCode).toBe(400)
    expect(res.json().errors[0].pointer).toBe('#/halfDayMinutes')
  })

  it('recomputes a range as a job with progress, making no days for a former employee without punches', async () => {
    await cloud.upsertEmployees(tenantId, [employee('X9', { status: 'TERMINATED' })])
    const started = await call(admin, 'POST', '/recompute', { from: '2026-11-20', to: '2026-11-24' })
    expect(started.statusCode).toBe(202)
    const job = started.json()
    expect(job).toMatchObject({ status: 'queued', employeesDone: 0 })
    await cloud.attendanceRounds()
    const done = (await call(reader, 'GET', `/jobs/${job.id}`)).json()
    expect(done).toMatchObject({ status: 'done', employeesDone: done.employees })
    expect((await call(reader, 'GET', '/days?employeeCode=X9')).json().data).toEqual([])
    // The active employees have every date of the range, absences included.
    const e2 = (await call(reader, 'GET', '/days?employeeCode=E2&from=2026-11-20&to=2026-11-24')).json().data
    expect(e2.map((d: { workDate: string }) => d.workDate)).toEqual([
      '2026-11-20',
      '2026-11-21',
      '2026-11-22',
      '2026-11-23',
      '2026-11-24',
    ])
  })

  it('recomputes up to today at most, and refuses a range that has not begun, naming the field', async () => {
    // Today is 2026-11-25 in Asia/Kolkata: a day computed for a later date would be an absence.
    const started = await call(admin, 'POST', '/recompute', { from: '2026-11-24', to: '2026-11-30' })
    expect(started.statusCode, started.body).toBe(202)
    expect(started.json()).toMatchObject({ from: '2026-11-24', to: '2026-11-25' })
    await cloud.attendanceRounds()
    const e2 = (await call(reader, 'GET', '/days?employeeCode=E2&from=2026-11-24&to=2026-11-30')).json().data
    expect(e2.map((d: { workDate: string }) => d.workDate)).toEqual(['2026-11-24', '2026-11-25'])
    const ahead = await call(admin, 'POST', '/recompute', { from: '2026-11-26', to: '2026-11-27' })
    expect(ahead.statusCode).toBe(400)
    expect(ahead.json().errors).toEqual([expect.objectContaining({ in: 'body', pointer: '#/from' })])
    const backwards = await call(admin, 'POST', '/recompute', { from: '2026-11-20', to: '2026-11-19' })
    expect(backwards.json().errors).toEqual([expect.objectContaining({ in: 'body', pointer: '#/to' })])
  })

  it('pages a listing once through, and refuses a cursor with other filters, naming the filter', async () => {
    const all = (await call(reader, 'GET', '/days?limit=200')).json().data
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const page: { data: { id: string }[]; nextCursor: string | null } = (
        await call(reader, 'GET', `/days?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
      ).json()
      seen.push(...page.data.map((d) => d.id))
      cursor = page.nextCursor
    } while (cursor !== null)
    expect(seen).toEqual(all.map((d: { id: string }) => d.id))
    const first = (await call(reader, 'GET', '/days?limit=1&employeeCode=E1')).json()
    const other = await call(reader, 'GET', `/days?limit=1&employeeCode=E2&cursor=${first.nextCursor}`)
    expect(other.statusCode).toBe(400)
    expect(other.json()).toMatchObject({ code: 'invalid_cursor', errors: [{ pointer: '#/employeeCode' }] })
  })
})
