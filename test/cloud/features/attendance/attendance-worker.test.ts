import { expect, it } from 'vitest'
import {
  AttendanceWorker,
  QUEUE_CONCURRENCY,
} from '../../../../cloud/features/attendance/attendance-worker.js'
import { parseTimestamp } from '../../../../shared/time.js'
import { bearer, describeEachDatabase, employee } from '../../../support/cloud-harness.js'

const API = '/api/public/v1/attendance'
const at = (text: string) => parseTimestamp(text) as number

describeEachDatabase('the attendance worker', (cloud) => {
  it('drains the queue several employees at a time as serve does, leaving every day as a fresh recompute makes it', async () => {
    cloud.fixedNow = at('2026-11-12T20:00:00+05:30')
    const tenantId = await cloud.createTenant({ timeZone: 'Asia/Kolkata' })
    const key = await cloud.createApiKey(tenantId, [
      'attendance:read',
      'attendance:write',
      'attendance:admin',
    ])
    const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
      cloud.app.inject({ method, url: `${API}${url}`, headers: bearer(key), ...(payload ? { payload } : {}) })
    const codes = Array.from({ length: 12 }, (_, i) => `W${String(i).padStart(2, '0')}`)
    await cloud.upsertEmployees(
      tenantId,
      codes.map((c) => employee(c)),
    )
    await call('POST', '/shifts', { code: 'GEN', start: '09:00', end: '18:00', unpaidBreakMinutes: 60 })
    await call('POST', '/assignments', { shiftCode: 'GEN', effectiveFrom: '2026-11-01' })
    const punches = codes.flatMap((code, i) =>
      ['2026-11-10', '2026-11-11', '2026-11-12'].flatMap((d) => [
        {
          employeeCode: code,
          punchType: 'IN',
          punchedAt: `${d}T09:0${i % 10}:00+05:30`,
          externalId: `${code}-${d}-in`,
        },
        {
          employeeCode: code,
          punchType: 'OUT',
          punchedAt: `${d}T18:0${i % 10}:00+05:30`,
          externalId: `${code}-${d}-out`,
        },
      ]),
    )
    expect((await call('POST', '/punches/batch', { punches })).json().summary.created).toBe(punches.length)

    const worker = new AttendanceWorker({
      stores: cloud.services.stores,
      recomputer: cloud.services.recomputer,
      queue: cloud.services.attendanceQueue,
      outbox: cloud.services.outbox,
      log: { info: () => {}, warn: () => {}, error: (o: unknown) => expect.fail(String(o)) },
      now: cloud.now,
      queueConcurrency: QUEUE_CONCURRENCY[cloud.kind],
    })
    while ((await worker.drainQueue()) > 0) {}

    const tenant = { id: tenantId, timeZone: 'Asia/Kolkata' }
    for (const code of codes) {
      // Nothing left to change: the concurrent drain wrote what a recompute computes now.
      expect(await cloud.services.recomputer.recompute(tenant, code, '2026-11-09', '2026-11-13')).toEqual({
        changed: 0,
        conflict: false,
      })
      const days = (await call('GET', `/days?employeeCode=${code}&from=2026-11-10&to=2026-11-12`)).json().data
      expect(days.map((d: { status: string; revision: number }) => [d.status, d.revision])).toEqual([
        ['PRESENT', 1],
        ['PRESENT', 1],
        ['PRESENT', 1],
      ])
    }
  })
})
