import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { formatServerTime, nowMicros } from '../../../../shared/time.js'
import type { WebhookDelivery } from '../../../../shared/webhooks.js'
import { describeEachDatabase, employee } from '../../../support/cloud-harness.js'
import { WebhookReceiver } from '../../../support/webhook-receiver.js'
import {
  createEndpoint,
  listDeliveries,
  newTenantConsole,
  showDelivery,
  waitForDelivery,
  waitUntil,
} from './webhook-kit.js'

// Each delivery keeps its payload metadata and every attempt; the log filters by endpoint,
// status, event type and time, with cursor paging.

const receiver = new WebhookReceiver()
beforeAll(() => receiver.start())
afterAll(() => receiver.stop())

const HOUR = 3600 * 1_000_000

// Every suite (one per database) and test runs at once: each test has its own tenant and paths.
describe.concurrent('the webhook delivery log', () => {
  describeEachDatabase(
    'the webhook delivery log',
    (cloud) => {
      it('records each attempt: number, time, trigger, status, duration, the first KiB of the answer, the error', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/log-${cloud.kind}`
        const { id } = await createEndpoint(api, { url: receiver.url(path) })
        // 3 KiB of multi-byte text, then a short answer.
        const long = '€'.repeat(1024)
        receiver.respondAt(path, (_request, index) =>
          index === 0
            ? { status: 500, headers: { 'content-type': 'text/plain' }, body: long }
            : { status: 200, body: '{"ok":true}' },
        )
        const startedAt = Date.now()
        const test = await api.post(`/webhooks/${id}/test`)
        const delivery = await waitForDelivery(api, id, (d) => d.status === 'succeeded')

        expect(delivery.messageId).toBe(test.json().messageId)
        expect(delivery.eventType).toBe('webhook.test')
        const body = receiver.to(path)[0]?.body ?? ''
        expect(delivery.body).toBe(body)
        const { createHash } = await import('node:crypto')
        expect(delivery.payload).toEqual({
          size: Buffer.byteLength(body),
          sha256: createHash('sha256').update(body).digest('hex'),
        })
        const [failed, succeeded] = delivery.attemptLog
        expect(failed).toMatchObject({ number: 1, trigger: 'automatic', responseStatus: 500, error: null })
        // The start of what was sent, no more than 1 KiB of it, in whole characters (€ is 3 bytes).
        const kept = failed?.responseBody ?? ''
        expect(Buffer.byteLength(kept)).toBeGreaterThan(1020)
        expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(1024)
        expect(long.startsWith(kept)).toBe(true)
        expect(succeeded).toMatchObject({ number: 2, trigger: 'automatic', responseStatus: 200, error: null })
        expect(succeeded?.responseBody).toBe('{"ok":true}')
        for (const attempt of delivery.attemptLog) {
          expect(Number.isInteger(attempt.durationMs) && attempt.durationMs >= 0).toBe(true)
          expect(Date.parse(attempt.at)).toBeGreaterThanOrEqual(startedAt - 1)
        }
        expect(Date.parse(succeeded?.at ?? '')).toBeGreaterThan(Date.parse(failed?.at ?? ''))
        // The delivery's lastAttemptAt is when the last attempt ended (its retry is timed from there).
        expect(Date.parse(delivery.lastAttemptAt ?? '')).toBeGreaterThanOrEqual(
          Date.parse(succeeded?.at ?? ''),
        )
      })

      it('records an answer of any bytes, though a text column cannot hold some (NUL, invalid UTF-8)', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/log-binary-${cloud.kind}`
        const { id } = await createEndpoint(api, { url: receiver.url(path) })
        receiver.respondAt(path, (_request, index) =>
          index === 0
            ? { status: 500, body: Buffer.from([0x6f, 0x6b, 0x00, 0xff, 0xfe, 0x21]) }
            : { status: 204 },
        )
        expect((await api.post(`/webhooks/${id}/test`)).statusCode).toBe(202)
        // Logged, and the delivery carried on to its next attempt.
        const delivery = await waitForDelivery(api, id, (d) => d.status === 'succeeded')
        expect(delivery.attemptLog.map((a) => a.responseStatus)).toEqual([500, 204])
        expect(delivery.attemptLog[0]?.responseBody).toMatch(/^ok.+!$/)
        expect(delivery.attemptLog[0]?.responseBody).not.toContain('\u0000')
      })

      it('records the error of an attempt that got no answer', async () => {
        const api = await newTenantConsole(cloud)
        // A port nothing listens on: connection refused.
        const closed = new WebhookReceiver()
        await closed.start()
        const url = closed.url('/gone')
        await closed.stop()
        const { id } = await createEndpoint(api, { url })
        expect((await api.post(`/webhooks/${id}/test`)).statusCode).toBe(202)
        const delivery = await waitForDelivery(api, id, (d) => d.attempts >= 1)
        expect(delivery.attemptLog[0]).toMatchObject({ responseStatus: null, responseBody: null })
        expect(delivery.attemptLog[0]?.error).toMatch(/ECONNREFUSED/)
      })
    },
    { webhooks: { retrySchedule: [0, 0], allowlist: ['127.0.0.1'] } },
  )

  describeEachDatabase(
    'the webhook delivery log, in the app clock',
    (cloud) => {
      afterEach(() => {
        cloud.fixedNow = undefined
      })

      it('filters by endpoint, status, event type and time, and pages with a cursor without duplicates or gaps', async () => {
        const api = await newTenantConsole(cloud)
        const ok = await createEndpoint(api, { url: receiver.url(`/log-ok-${cloud.kind}`) })
        const bad = await createEndpoint(api, { url: receiver.url(`/log-bad-${cloud.kind}`) })
        receiver.respondAt(`/log-bad-${cloud.kind}`, { status: 500 })

        // Two hours ago: two employees; now: five more, and a test event to each endpoint.
        const twoHoursAgo = nowMicros() - 2 * HOUR
        cloud.fixedNow = twoHoursAgo
        await cloud.upsertEmployees(api.tenantId, [employee('L01'), employee('L02')])
        await waitUntil(async () => (await listDeliveries(api)).length === 4, 'the old deliveries')
        cloud.fixedNow = undefined
        const anHourAgo = formatServerTime(nowMicros() - HOUR)
        for (const code of ['L03', 'L04', 'L05', 'L06', 'L07'])
          await cloud.upsertEmployees(api.tenantId, [employee(code)])
        for (const endpoint of [ok, bad]) await api.post(`/webhooks/${endpoint.id}/test`)
        const settled = (d: WebhookDelivery) => d.status === 'succeeded' || d.status === 'exhausted'
        const all = await waitUntil(async () => {
          const log = await listDeliveries(api)
          return log.length === 16 && log.every(settled) ? log : undefined
        }, 'all 16 deliveries settled')

        const ids = (list: WebhookDelivery[]) => list.map((d) => d.id).sort()
        const expected = (keep: (d: WebhookDelivery) => boolean) => ids(all.filter(keep))
        expect(new Set(all.map((d) => d.id)).size).toBe(16)
        // Newest first.
        expect(all.map((d) => d.id)).toEqual([...all.map((d) => d.id)].sort().reverse())

        expect(ids(await listDeliveries(api, { endpointId: ok.id }))).toEqual(
          expected((d) => d.endpointId === ok.id),
        )
        expect(await listDeliveries(api, { endpointId: ok.id })).toHaveLength(8)
        expect(ids(await listDeliveries(api, { status: 'exhausted' }))).toEqual(
          expected((d) => d.endpointId === bad.id),
        )
        expect(await listDeliveries(api, { status: 'succeeded', eventType: 'webhook.test' })).toHaveLength(1)
        expect(ids(await listDeliveries(api, { eventType: 'employee.created', endpointId: bad.id }))).toEqual(
          expected((d) => d.eventType === 'employee.created' && d.endpointId === bad.id),
        )
        const recent = await listDeliveries(api, { from: anHourAgo })
        expect(recent).toHaveLength(12)
        const old = await listDeliveries(api, { to: anHourAgo })
        expect(old.map((d) => d.createdAt < anHourAgo)).toEqual([true, true, true, true])
        expect(ids([...recent, ...old])).toEqual(ids(all))

        // Pages of 3, with a filter: every delivery once, in order, and the cursor keeps the filter,
        // though a new delivery is made while paging.
        const pages: WebhookDelivery[][] = []
        let cursor: string | null = null
        do {
          const query: string = `/webhook-deliveries?endpointId=${bad.id}&limit=3${cursor ? `&cursor=${cursor}` : ''}`
          const res = await api.get(query)
          expect(res.statusCode, res.body).toBe(200)
          pages.push(res.json().data)
          cursor = res.json().nextCursor
          if (pages.length === 1) {
            expect((await api.post(`/webhooks/${bad.id}/test`)).statusCode).toBe(202)
            await waitUntil(
              async () => (await listDeliveries(api, { endpointId: bad.id })).length === 9,
              'a delivery made while paging',
            )
          }
        } while (cursor !== null)
        expect(pages.map((p) => p.length)).toEqual([3, 3, 2])
        expect(pages.flat().map((d) => d.id)).toEqual(
          all.filter((d) => d.endpointId === bad.id).map((d) => d.id),
        )

        // A cursor is for the filter it was made with.
        const first = (await api.get(`/webhook-deliveries?endpointId=${bad.id}&limit=3`)).json()
        const mismatched = await api.get(
          `/webhook-deliveries?endpointId=${ok.id}&limit=3&cursor=${first.nextCursor}`,
        )
        expect(mismatched.statusCode).toBe(400)
        expect((await api.get('/webhook-deliveries?limit=0')).statusCode).toBe(400)
        expect((await api.get('/webhook-deliveries?limit=201')).statusCode).toBe(400)
        expect((await api.get('/webhook-deliveries?cursor=not-a-cursor')).statusCode).toBe(400)
        for (const name of ['from', 'to']) {
          const res = await api.get(`/webhook-deliveries?${name}=yesterday`)
          expect(res.statusCode).toBe(400)
          expect(res.json().code).toBe('validation_failed')
        }

        // Another tenant sees none of it.
        const elsewhere = await newTenantConsole(cloud)
        expect(await listDeliveries(elsewhere)).toEqual([])
        expect((await elsewhere.get(`/webhook-deliveries/${all[0]?.id}`)).statusCode).toBe(404)
        expect((await showDelivery(api, all[0]?.id as string)).id).toBe(all[0]?.id)
      })
    },
    { webhooks: { retrySchedule: [0, 0], allowlist: ['127.0.0.1'] } },
  )
})
