import { afterEach, describe, expect, it } from 'vitest'
import { WebhookDispatcher } from '../../../../cloud/features/webhooks/dispatcher.js'
import { DEFAULT_WEBHOOK_SETTINGS } from '../../../../cloud/settings/webhook-settings.js'
import { parseTimestamp } from '../../../../shared/time.js'
import type { DeliveryStatus } from '../../../../shared/webhooks.js'
import {
  bearer,
  describeEachDatabase,
  employee,
  TEST_ACTOR,
  type TestCloud,
} from '../../../support/cloud-harness.js'
import { adminConsole, type ConsoleApi, viewerConsole } from '../../console-kit.js'

// The console API: the dashboard's punches per hour and webhook delivery outcomes per
// day, counted in SQL on either database, in the tenant's time zone (Asia/Kolkata is +05:30, so
// its hours start at half past UTC; America/New_York puts its clocks back on 2026-11-01).

const at = (text: string): number => {
  const us = parseTimestamp(text)
  if (us === undefined) throw new Error(`not a time: ${text}`)
  return us
}

/** A tenant in `timeZone` at the fixed time `now`, its console, and a key to punch with. */
async function tenantAt(cloud: TestCloud, timeZone: string, now: string) {
  cloud.fixedNow = at(now)
  const tenantId = await cloud.createTenant({ timeZone })
  await cloud.upsertEmployees(tenantId, [employee('E1')])
  return { api: await adminConsole(cloud, tenantId), key: await cloud.createApiKey(tenantId) }
}

async function punch(cloud: TestCloud, key: string, punchedAt: string) {
  const res = await cloud.app.inject({
    method: 'POST',
    url: '/api/public/v1/attendance/punches',
    headers: bearer(key),
    payload: { employeeCode: 'E1', punchType: 'IN', punchedAt },
  })
  expect(res.statusCode, res.body).toBe(201)
}

/**
 * Deliveries of `count` test events to a new endpoint, created at `createdAt`, left in `status` by
 * one dispatcher round: a receiver that answers 200 or 500, one attempt or one with a retry later,
 * or a paused endpoint (held: pending).
 */
async function deliveries(
  cloud: TestCloud,
  tenantId: string,
  createdAt: string,
  status: DeliveryStatus,
  count = 1,
): Promise<void> {
  cloud.fixedNow = at(createdAt)
  const endpoints = cloud.services.webhookEndpoints
  const { endpoint } = await endpoints.create(
    tenantId,
    { url: 'https://hooks.example.com/dashboard', events: ['webhook.test'] },
    TEST_ACTOR,
  )
  if (status === 'pending') await endpoints.pause(tenantId, endpoint.id, TEST_ACTOR)
  for (let i = 0; i < count; i++) await endpoints.sendTest(tenantId, endpoint.id, TEST_ACTOR)
  const dispatcher = new WebhookDispatcher({
    stores: cloud.services.stores,
    dialect: cloud.database.dialect,
    secretBox: cloud.database.secretBox,
    outbox: cloud.services.outbox,
    audit: cloud.services.audit,
    sender: {
      send: async () => ({
        status: status === 'succeeded' ? 200 : 500,
        durationMs: 1,
        body: '',
        error: null,
        retryAfterMs: undefined,
      }),
    },
    settings: { ...DEFAULT_WEBHOOK_SETTINGS, retrySchedule: status === 'failed' ? [0, 3600] : [0] },
    log: { error: () => {}, warn: () => {}, debug: () => {} },
    now: cloud.now,
  })
  dispatcher.start()
  try {
    await expect
      .poll(
        async () =>
          (await cloud.services.webhookDeliveries.list(tenantId, { endpointId: endpoint.id })).data.map(
            (d) => d.status,
          ),
        { timeout: 10_000, interval: 25 },
      )
      .toEqual(Array.from({ length: count }, () => status))
  } finally {
    await dispatcher.stop()
  }
}

const day = (date: string, counts: Partial<Record<DeliveryStatus, number>> = {}) => ({
  day: date,
  succeeded: 0,
  failed: 0,
  exhausted: 0,
  pending: 0,
  ...counts,
})

describeEachDatabase('the dashboard in the console API', (cloud) => {
  afterEach(() => {
    cloud.fixedNow = undefined
  })

  describe('punches per hour', () => {
    it('counts punches by the hour they happened in, on the tenant’s clock, the current hour last', async () => {
      const { api, key } = await tenantAt(cloud, 'Asia/Kolkata', '2026-11-21T10:20:00+05:30')
      for (const time of [
        '2026-11-21T07:59:59.999+05:30', // before the window
        '2026-11-21T08:00:00+05:30',
        '2026-11-21T03:59:59Z', // 09:29:59 in Kolkata
        '2026-11-21T09:59:59.999999+05:30',
        '2026-11-21T10:00:00+05:30',
        '2026-11-21T10:19:00+05:30',
      ])
        await punch(cloud, key, time)
      const other = await tenantAt(cloud, 'Asia/Kolkata', '2026-11-21T10:20:00+05:30')
      await punch(cloud, other.key, '2026-11-21T09:00:00+05:30')

      const res = await api.get('/dashboard/punches-per-hour?hours=3')
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json()).toEqual({
        timeZone: 'Asia/Kolkata',
        data: [
          { hour: '2026-11-21T08:00:00+05:30', count: 1 },
          { hour: '2026-11-21T09:00:00+05:30', count: 2 },
          { hour: '2026-11-21T10:00:00+05:30', count: 2 },
        ],
      })
      const day = (await api.get('/dashboard/punches-per-hour')).json().data
      expect(day).toHaveLength(24)
      expect(day[0].hour).toBe('2026-11-20T11:00:00+05:30')
      expect(day.reduce((n: number, h: { count: number }) => n + h.count, 0)).toBe(6)
    })

    it('shows the hour repeated when clocks go back as two hours, each with its offset', async () => {
      const { api, key } = await tenantAt(cloud, 'America/New_York', '2026-11-01T02:30:00-05:00')
      await punch(cloud, key, '2026-11-01T01:30:00-04:00')
      await punch(cloud, key, '2026-11-01T01:30:00-05:00')
      await punch(cloud, key, '2026-11-01T01:45:00-05:00')
      const res = await api.get('/dashboard/punches-per-hour?hours=4')
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json().data).toEqual([
        { hour: '2026-11-01T00:00:00-04:00', count: 0 },
        { hour: '2026-11-01T01:00:00-04:00', count: 1 },
        { hour: '2026-11-01T01:00:00-05:00', count: 2 },
        { hour: '2026-11-01T02:00:00-05:00', count: 0 },
      ])
    })

    it('takes 1 to 168 hours', async () => {
      const { api } = await tenantAt(cloud, 'UTC', '2026-11-21T06:00:00Z')
      expect((await api.get('/dashboard/punches-per-hour?hours=168')).json().data).toHaveLength(168)
      expect((await api.get('/dashboard/punches-per-hour?hours=1')).json().data).toEqual([
        { hour: '2026-11-21T06:00:00Z', count: 0 },
      ])
      for (const hours of ['0', '169', '1.5', 'x']) {
        const res = await api.get(`/dashboard/punches-per-hour?hours=${hours}`)
        expect(res.statusCode, hours).toBe(400)
        expect(res.json().errors[0].pointer).toBe('#/hours')
      }
    })
  })

  describe('webhook deliveries per day', () => {
    it('counts deliveries by the day they were created, on the tenant’s calendar, by their status now', async () => {
      const { api } = await tenantAt(cloud, 'Asia/Kolkata', '2026-11-21T10:00:00+05:30')
      await deliveries(cloud, api.tenantId, '2026-11-18T23:59:59.999+05:30', 'succeeded') // before the window
      await deliveries(cloud, api.tenantId, '2026-11-19T00:00:00+05:30', 'succeeded')
      await deliveries(cloud, api.tenantId, '2026-11-20T12:00:00+05:30', 'exhausted', 2)
      await deliveries(cloud, api.tenantId, '2026-11-20T18:29:59Z', 'succeeded') // 23:59:59 in Kolkata
      await deliveries(cloud, api.tenantId, '2026-11-21T09:00:00+05:30', 'pending')
      const other = await tenantAt(cloud, 'Asia/Kolkata', '2026-11-21T10:00:00+05:30')
      await deliveries(cloud, other.api.tenantId, '2026-11-21T09:00:00+05:30', 'exhausted')
      // Last, and earliest on its day: a later round would find its retry due.
      await deliveries(cloud, api.tenantId, '2026-11-20T18:30:00Z', 'failed') // 00:00 on the 21st

      cloud.fixedNow = at('2026-11-21T10:00:00+05:30')
      const res = await api.get('/dashboard/webhook-deliveries?days=3')
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json()).toEqual({
        timeZone: 'Asia/Kolkata',
        data: [
          day('2026-11-19', { succeeded: 1 }),
          day('2026-11-20', { exhausted: 2, succeeded: 1 }),
          day('2026-11-21', { failed: 1, pending: 1 }),
        ],
      })
      const week = (await api.get('/dashboard/webhook-deliveries')).json().data
      expect(week.map((d: { day: string }) => d.day)).toEqual([
        '2026-11-15',
        '2026-11-16',
        '2026-11-17',
        '2026-11-18',
        '2026-11-19',
        '2026-11-20',
        '2026-11-21',
      ])
      expect(week[3]).toEqual(day('2026-11-18', { succeeded: 1 }))
    })

    it('gives the day clocks go back its 25 hours, and the days either side theirs', async () => {
      const { api } = await tenantAt(cloud, 'America/New_York', '2026-11-02T12:00:00-05:00')
      await deliveries(cloud, api.tenantId, '2026-10-31T23:59:00-04:00', 'succeeded')
      await deliveries(cloud, api.tenantId, '2026-11-01T00:30:00-04:00', 'exhausted')
      await deliveries(cloud, api.tenantId, '2026-11-01T23:30:00-05:00', 'exhausted')
      await deliveries(cloud, api.tenantId, '2026-11-02T00:00:00-05:00', 'failed')
      cloud.fixedNow = at('2026-11-02T12:00:00-05:00')
      const res = await api.get('/dashboard/webhook-deliveries?days=3')
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json().data).toEqual([
        day('2026-10-31', { succeeded: 1 }),
        day('2026-11-01', { exhausted: 2 }),
        day('2026-11-02', { failed: 1 }),
      ])
    })

    it('takes 1 to 90 days', async () => {
      const { api } = await tenantAt(cloud, 'UTC', '2026-11-21T06:00:00Z')
      expect((await api.get('/dashboard/webhook-deliveries?days=90')).json().data).toHaveLength(90)
      expect((await api.get('/dashboard/webhook-deliveries?days=1')).json().data).toEqual([day('2026-11-21')])
      for (const days of ['0', '91', '-1', '2.5']) {
        const res = await api.get(`/dashboard/webhook-deliveries?days=${days}`)
        expect(res.statusCode, days).toBe(400)
        expect(res.json().errors[0].pointer).toBe('#/days')
      }
    })
  })

  it('is there for a viewer too', async () => {
    const { api } = await tenantAt(cloud, 'Asia/Kolkata', '2026-11-21T10:00:00+05:30')
    const viewer: ConsoleApi = await viewerConsole(cloud, api.tenantId)
    for (const path of ['/dashboard/punches-per-hour', '/dashboard/webhook-deliveries']) {
      const res = await viewer.get(path)
      expect(res.statusCode, path).toBe(200)
      expect(res.json()).toEqual((await api.get(path)).json())
    }
  })
})
