import { afterAll, beforeAll, expect, it } from 'vitest'
import { parseTimestamp } from '../../../../shared/time.js'
import { bearer, describeEachDatabase, employee } from '../../../support/cloud-harness.js'
import { WebhookReceiver } from '../../../support/webhook-receiver.js'
import { consoleFor, createEndpoint } from '../webhooks/webhook-kit.js'

// A site's agent was cut off from the cloud for two days; its backlog arrives at once, with the
// punches' own times. The days it touches were already made (ABSENT), became final and were sent
// as final: the backlog must correct them, raise their revisions, and tell the webhook consumer,
// which a sync by updatedAt must see too (docs/decisions/0085-attendance-days-are-a-pure-function.md).

const receiver = new WebhookReceiver()
beforeAll(() => receiver.start())
afterAll(() => receiver.stop())

const API = '/api/public/v1/attendance'

/** An attendance.day.finalized body's data is a day; an attendance.day.updated one's holds it. */
interface DayEvent {
  employeeCode?: string
  workDate?: string
  revision?: number
  day?: { employeeCode: string; workDate: string; revision: number; status: string }
  previousRevision?: number
  changed?: string[]
}
const at = (text: string) => parseTimestamp(text) as number

describeEachDatabase(
  'an agent backlog two days late',
  (cloud) => {
    it('corrects days already final, raises their revisions and delivers attendance.day.updated', async () => {
      cloud.fixedNow = at('2026-11-17T08:00:00+05:30')
      const tenantId = await cloud.createTenant({ timeZone: 'Asia/Kolkata' })
      const key = await cloud.createApiKey(tenantId, [
        'attendance:read',
        'attendance:write',
        'attendance:admin',
      ])
      const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
        cloud.app.inject({
          method,
          url: `${API}${url}`,
          headers: bearer(key),
          ...(payload ? { payload } : {}),
        })
      await cloud.upsertEmployees(tenantId, [employee('B1'), employee('B2')])
      expect(
        (await call('POST', '/shifts', { code: 'GEN', start: '09:00', end: '18:00', unpaidBreakMinutes: 60 }))
          .statusCode,
      ).toBe(201)
      expect(
        (await call('POST', '/assignments', { shiftCode: 'GEN', effectiveFrom: '2026-11-01' })).statusCode,
      ).toBe(201)
      const api = await consoleFor(cloud, tenantId)
      const path = `/backlog-${cloud.kind}`
      const { secret } = await createEndpoint(api, {
        url: receiver.url(path),
        events: ['attendance.day.finalized', 'attendance.day.updated'],
      })
      receiver.verifyAt(path, secret)

      // The days are made as they come, and become final with nothing punched: the agent is offline.
      await cloud.attendanceRounds()
      for (const day of [
        '2026-11-18T08:00:00+05:30',
        '2026-11-19T08:00:00+05:30',
        '2026-11-20T20:00:00+05:30',
      ]) {
        cloud.fixedNow = at(day)
        await cloud.attendanceRounds()
      }
      const before = (await call('GET', '/days/B1/2026-11-18')).json()
      expect(before).toMatchObject({ status: 'ABSENT', state: 'FINAL', revision: 1 })
      /** The deliveries of one event type about one employee's day, as the receiver got them. */
      const sent = (type: string, code: string, date: string): DayEvent[] =>
        receiver
          .to(path)
          .filter((r) => r.json?.type === type)
          .map((r) => r.json?.data as DayEvent)
          .filter((d) => (d.day ?? d).employeeCode === code && (d.day ?? d).workDate === date)
      await receiver.waitFor(() => sent('attendance.day.finalized', 'B1', '2026-11-19').length > 0)
      const syncFrom = (await call('GET', '/days?updatedSince=2020-01-01T00:00:00Z&limit=200'))
        .json()
        .data.at(-1).updatedAt

      // The backlog: two days of B1's punches, arriving on the evening of the 20th.
      const backlog = ['2026-11-18', '2026-11-19'].flatMap((d) => [
        {
          employeeCode: 'B1',
          punchType: 'IN',
          punchedAt: `${d}T08:58:00+05:30`,
          externalId: `B1-${d}-in`,
          source: 'hajri-agent',
        },
        {
          employeeCode: 'B1',
          punchType: 'OUT',
          punchedAt: `${d}T18:03:00+05:30`,
          externalId: `B1-${d}-out`,
          source: 'hajri-agent',
        },
      ])
      const batch = await call('POST', '/punches/batch', { punches: backlog })
      expect(batch.json().summary).toMatchObject({ created: 4, rejected: 0 })
      await cloud.attendanceRounds()

      for (const date of ['2026-11-18', '2026-11-19']) {
        const day = (await call('GET', `/days/B1/${date}`)).json()
        // 09:00 (arriving early is not work) to 18:03, less the hour's break.
        expect(day).toMatchObject({ status: 'PRESENT', state: 'FINAL', revision: 2, workedMinutes: 483 })
        await receiver.waitFor(() => sent('attendance.day.updated', 'B1', date).length > 0)
        const [update] = sent('attendance.day.updated', 'B1', date)
        expect(update?.day).toMatchObject({ revision: 2, status: 'PRESENT' })
        expect(update?.previousRevision).toBe(1)
        expect(update?.changed).toEqual(expect.arrayContaining(['status', 'workedMinutes', 'punches']))
        // Sent once per day as final, before: never a second finalized.
        expect(sent('attendance.day.finalized', 'B1', date)).toHaveLength(1)
      }
      // B2 punched nothing: its days are untouched, and nothing was sent for them again.
      expect((await call('GET', '/days/B2/2026-11-18')).json()).toMatchObject({
        status: 'ABSENT',
        revision: 1,
      })
      expect(sent('attendance.day.updated', 'B2', '2026-11-18')).toHaveLength(0)
      // A sync from where it left off sees exactly the corrected days.
      const changed = (
        await call('GET', `/days?updatedSince=${encodeURIComponent(syncFrom)}&limit=200`)
      ).json().data
      const corrected = changed.filter((d: { updatedAt: string }) => d.updatedAt > syncFrom)
      expect(
        corrected
          .map((d: { employeeCode: string; workDate: string }) => `${d.employeeCode} ${d.workDate}`)
          .sort(),
      ).toEqual(['B1 2026-11-18', 'B1 2026-11-19'])
      // Every delivery verified with the endpoint's secret.
      expect(receiver.to(path).every((r) => r.verifiedWith.length > 0)).toBe(true)
    })
  },
  { webhooks: { retrySchedule: [0, 1], allowlist: ['127.0.0.1'] } },
)
