import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatServerTime, nowMicros } from '../../../../shared/time.js'
import { describeEachDatabase, employee } from '../../../support/cloud-harness.js'
import { WebhookReceiver } from '../../../support/webhook-receiver.js'
import {
  auditEntries,
  createEndpoint,
  listDeliveries,
  newTenantConsole,
  showDelivery,
  waitForDelivery,
  waitUntil,
} from './webhook-kit.js'

// An admin retries a failed or exhausted delivery, or replays an endpoint's failures since a
// time; each act is audited with the actor.

const receiver = new WebhookReceiver()
beforeAll(() => receiver.start())
afterAll(() => receiver.stop())

// Every suite (one per database) and test runs at once: each test has its own tenant and paths.
describe.concurrent('manual retries', () => {
  describeEachDatabase(
    'manual retry and replay of webhook deliveries',
    (cloud) => {
      it.concurrent('retries an exhausted delivery on request: a manual attempt, the same webhook-id, an audit entry naming the admin', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/retry-${cloud.kind}`
        const { id, secret } = await createEndpoint(api, { url: receiver.url(path) })
        let fixed = false
        receiver.verifyAt(path, secret)
        receiver.respondAt(path, () => ({ status: fixed ? 200 : 500 }))
        expect((await api.post(`/webhooks/${id}/test`)).statusCode).toBe(202)
        const exhausted = await waitForDelivery(api, id, (d) => d.status === 'exhausted')

        fixed = true
        const retry = await api.post(`/webhook-deliveries/${exhausted.id}/retry`)
        expect(retry.statusCode).toBe(202)
        expect(retry.json()).toMatchObject({ id: exhausted.id, status: 'pending' })

        const delivered = await waitForDelivery(api, id, (d) => d.status === 'succeeded')
        expect(delivered.attemptLog.map((a) => [a.number, a.trigger, a.responseStatus])).toEqual([
          [1, 'automatic', 500],
          [2, 'manual', 200],
        ])
        const sent = receiver.to(path)
        expect(sent.map((r) => r.headers['webhook-id'])).toEqual([exhausted.messageId, exhausted.messageId])
        expect(sent[1]?.verifiedWith).toEqual([secret])
        const entries = await auditEntries(cloud, api.tenantId, 'webhook_delivery.retried')
        expect(entries).toHaveLength(1)
        expect(entries[0]).toMatchObject({
          actor: api.actor,
          target: { type: 'webhook_delivery', id: exhausted.id },
          details: { endpointId: id, messageId: exhausted.messageId, previousStatus: 'exhausted' },
        })
      })

      it.concurrent('leaves a delivery exhausted when its manual retry fails too', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/retry-fails-${cloud.kind}`
        const { id } = await createEndpoint(api, { url: receiver.url(path) })
        receiver.respondAt(path, { status: 502 })
        expect((await api.post(`/webhooks/${id}/test`)).statusCode).toBe(202)
        const exhausted = await waitForDelivery(api, id, (d) => d.status === 'exhausted')
        expect((await api.post(`/webhook-deliveries/${exhausted.id}/retry`)).statusCode).toBe(202)
        const again = await waitForDelivery(api, id, (d) => d.attempts === 2)
        expect(again).toMatchObject({ status: 'exhausted', nextAttemptAt: null })
        expect(again.attemptLog[1]).toMatchObject({ number: 2, trigger: 'manual', responseStatus: 502 })
        expect(receiver.to(path)).toHaveLength(2)
      })

      it.concurrent('refuses to retry a succeeded or pending delivery (409), and another tenant’s (404)', async () => {
        const api = await newTenantConsole(cloud)
        const elsewhere = await newTenantConsole(cloud)
        receiver.respondAt(`/retry-ok-${cloud.kind}`, { status: 200 })
        const ok = await createEndpoint(api, { url: receiver.url(`/retry-ok-${cloud.kind}`) })
        expect((await api.post(`/webhooks/${ok.id}/test`)).statusCode).toBe(202)
        const succeeded = await waitForDelivery(api, ok.id, (d) => d.status === 'succeeded')
        const held = await createEndpoint(api, { url: receiver.url(`/retry-held-${cloud.kind}`) })
        expect((await api.post(`/webhooks/${held.id}/pause`)).statusCode).toBe(200)
        expect((await api.post(`/webhooks/${held.id}/test`)).statusCode).toBe(202)
        const pending = await waitForDelivery(api, held.id, (d) => d.status === 'pending')

        for (const delivery of [succeeded, pending]) {
          const res = await api.post(`/webhook-deliveries/${delivery.id}/retry`)
          expect(res.statusCode).toBe(409)
          expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
          expect(res.json()).toMatchObject({ status: 409, code: 'webhook_delivery_not_retryable' })
        }
        const foreign = await elsewhere.post(`/webhook-deliveries/${succeeded.id}/retry`)
        expect(foreign.statusCode).toBe(404)
        expect(foreign.json().code).toBe('webhook_delivery_not_found')
        expect((await elsewhere.get(`/webhook-deliveries/${succeeded.id}`)).statusCode).toBe(404)
        expect(await auditEntries(cloud, api.tenantId, 'webhook_delivery.retried')).toEqual([])
        expect((await showDelivery(api, succeeded.id)).attempts).toBe(1)
      })

      it.concurrent('refuses to retry a delivery whose endpoint was deleted: it would never be sent', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/retry-deleted-${cloud.kind}`
        receiver.respondAt(path, { status: 500 })
        const { id } = await createEndpoint(api, { url: receiver.url(path) })
        expect((await api.post(`/webhooks/${id}/test`)).statusCode).toBe(202)
        const exhausted = await waitForDelivery(api, id, (d) => d.status === 'exhausted')
        expect((await api.delete(`/webhooks/${id}`)).statusCode).toBe(204)
        const res = await api.post(`/webhook-deliveries/${exhausted.id}/retry`)
        expect(res.statusCode).toBe(409)
        expect(res.json().code).toBe('webhook_delivery_not_retryable')
        expect((await showDelivery(api, exhausted.id)).status).toBe('exhausted')
        expect(await auditEntries(cloud, api.tenantId, 'webhook_delivery.retried')).toEqual([])
      })

      it.concurrent("replays an endpoint's failed deliveries created since a time, and only those", async () => {
        const api = await newTenantConsole(cloud)
        const path = `/replay-${cloud.kind}`
        const other = await createEndpoint(api, { url: receiver.url(`/replay-other-${cloud.kind}`) })
        const { id } = await createEndpoint(api, { url: receiver.url(path) })
        let fixed = false
        // E-OK always succeeds; the others fail until the receiver is fixed. The other endpoint always fails.
        receiver.respondAt(path, (request) => ({
          status: fixed || request.json?.data.employeeCode === 'E-OK' ? 200 : 500,
        }))
        receiver.respondAt(`/replay-other-${cloud.kind}`, { status: 500 })
        // A failure before the replay's `since`.
        await cloud.upsertEmployees(api.tenantId, [employee('E-OLD')])
        await waitUntil(
          async () => (await listDeliveries(api, { endpointId: id, status: 'exhausted' })).length === 1,
          'the old delivery exhausted',
        )
        const since = formatServerTime(nowMicros())
        await cloud.upsertEmployees(api.tenantId, [employee('E-NEW1'), employee('E-OK'), employee('E-NEW2')])
        await waitUntil(async () => {
          const log = await listDeliveries(api, { endpointId: id })
          return log.length === 4 && log.every((d) => d.status === 'exhausted' || d.status === 'succeeded')
        }, 'the new deliveries settled')
        await waitUntil(
          async () => (await listDeliveries(api, { endpointId: other.id, status: 'exhausted' })).length === 4,
          'the other endpoint’s deliveries exhausted',
        )
        const before = receiver.to(path).length

        fixed = true
        const replay = await api.post(`/webhooks/${id}/replay`, { since })
        expect(replay.statusCode).toBe(202)
        expect(replay.json()).toEqual({ replayed: 2 })
        await receiver.waitFor(() => receiver.to(path).length === before + 2)
        const replayed = receiver.to(path).slice(before)
        expect(replayed.map((r) => r.json?.data.employeeCode).sort()).toEqual(['E-NEW1', 'E-NEW2'])
        await waitUntil(
          async () => (await listDeliveries(api, { endpointId: id, status: 'succeeded' })).length === 3,
          'the replayed deliveries succeeded',
        )
        const outcomes = new Map<string, string>()
        for (const d of await listDeliveries(api, { endpointId: id })) {
          const detail = await showDelivery(api, d.id)
          const trigger = detail.attemptLog.at(-1)?.trigger
          outcomes.set(JSON.parse(detail.body).data.employeeCode, `${detail.status} ${trigger}`)
        }
        expect(Object.fromEntries(outcomes)).toEqual({
          'E-OLD': 'exhausted automatic',
          'E-NEW1': 'succeeded manual',
          'E-OK': 'succeeded automatic',
          'E-NEW2': 'succeeded manual',
        })
        // Another endpoint's failures are not replayed.
        expect((await listDeliveries(api, { endpointId: other.id, status: 'exhausted' })).length).toBe(4)

        const [entry, ...more] = await auditEntries(cloud, api.tenantId, 'webhook_delivery.replayed')
        expect(more).toEqual([])
        expect(entry).toMatchObject({
          actor: api.actor,
          target: { type: 'webhook_endpoint', id },
          details: { deliveries: 2 },
        })
      })

      it.concurrent('refuses a replay without a valid time (400) or of an unknown endpoint (404)', async () => {
        const api = await newTenantConsole(cloud)
        const { id } = await createEndpoint(api, { url: receiver.url(`/replay-bad-${cloud.kind}`) })
        const bad = await api.post(`/webhooks/${id}/replay`, { since: 'yesterday' })
        expect(bad.statusCode).toBe(400)
        expect(bad.json().code).toBe('validation_failed')
        const unknown = await api.post(`/webhooks/whk_00000000000000000000000000/replay`, {
          since: formatServerTime(nowMicros()),
        })
        expect(unknown.statusCode).toBe(404)
        expect(unknown.json().code).toBe('webhook_endpoint_not_found')
      })
    },
    { webhooks: { retrySchedule: [0], allowlist: ['127.0.0.1'] } },
  )

  describeEachDatabase(
    'manual retry of a webhook delivery with an attempt in flight',
    (cloud) => {
      it('refuses a retry while an attempt is in flight (it would be lost), and takes it once the attempt ends', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/in-flight-${cloud.kind}`
        const { id } = await createEndpoint(api, { url: receiver.url(path) })
        // Fails, then hangs past the timeout (the last scheduled attempt), then succeeds.
        receiver.respondAt(
          path,
          (_request, index) => [{ status: 500 }, { hang: true }][index] ?? { status: 200 },
        )
        expect((await api.post(`/webhooks/${id}/test`)).statusCode).toBe(202)
        await receiver.waitFor(() => receiver.to(path).length === 2)
        const inFlight = await waitForDelivery(api, id, (d) => d.attempts === 1)
        expect(inFlight.status).toBe('failed')

        const early = await api.post(`/webhook-deliveries/${inFlight.id}/retry`)
        expect(early.statusCode).toBe(409)
        expect(early.json().code).toBe('webhook_delivery_not_retryable')
        const replay = await api.post(`/webhooks/${id}/replay`, { since: inFlight.createdAt })
        expect(replay.json()).toEqual({ replayed: 0 })

        const exhausted = await waitForDelivery(api, id, (d) => d.status === 'exhausted')
        expect(exhausted.attemptLog.map((a) => a.trigger)).toEqual(['automatic', 'automatic'])
        expect((await api.post(`/webhook-deliveries/${inFlight.id}/retry`)).statusCode).toBe(202)
        const delivered = await waitForDelivery(api, id, (d) => d.status === 'succeeded')
        expect(delivered.attemptLog.map((a) => [a.trigger, a.responseStatus])).toEqual([
          ['automatic', 500],
          ['automatic', null],
          ['manual', 200],
        ])
        expect(await auditEntries(cloud, api.tenantId, 'webhook_delivery.retried')).toHaveLength(1)
      })
    },
    { webhooks: { retrySchedule: [0, 0], timeoutSeconds: 1, allowlist: ['127.0.0.1'] } },
  )
})
