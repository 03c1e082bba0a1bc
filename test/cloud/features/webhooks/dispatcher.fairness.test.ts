import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeEachDatabase } from '../../../support/cloud-harness.js'
import { WebhookReceiver } from '../../../support/webhook-receiver.js'
import {
  createEndpoint,
  listDeliveries,
  newTenantConsole,
  waitForDelivery,
  waitUntil,
} from './webhook-kit.js'

// Bounded concurrency overall and per endpoint
// (docs/decisions/0052-per-endpoint-concurrency-per-instance.md). One endpoint's backlog must not hold up the
// others: a slow receiver uses its own share of the dispatcher, not everyone's turn.

const receiver = new WebhookReceiver()
beforeAll(() => receiver.start())
afterAll(() => receiver.stop())

// The suites of both databases run at once.
describe.concurrent('webhook dispatch', () => {
  describeEachDatabase(
    'webhook dispatch across endpoints',
    (cloud) => {
      it("sends another tenant's delivery while a slow endpoint works through its backlog", async () => {
        const slowApi = await newTenantConsole(cloud)
        const fastApi = await newTenantConsole(cloud)
        const slowPath = `/slow-${cloud.kind}`
        const fastPath = `/fast-${cloud.kind}`
        const slow = await createEndpoint(slowApi, { url: receiver.url(slowPath) })
        const fast = await createEndpoint(fastApi, { url: receiver.url(fastPath) })
        receiver.respond((request) => (request.path === slowPath ? { hang: true } : { status: 204 }))

        // A backlog: ten deliveries held by a pause, then let go at once.
        expect((await slowApi.post(`/webhooks/${slow.id}/pause`)).statusCode).toBe(200)
        for (let i = 0; i < 10; i++)
          expect((await slowApi.post(`/webhooks/${slow.id}/test`)).statusCode).toBe(202)
        await waitUntil(async () => (await listDeliveries(slowApi)).length === 10, 'the backlog')
        expect((await slowApi.post(`/webhooks/${slow.id}/resume`)).statusCode).toBe(200)
        await receiver.waitFor(() => receiver.to(slowPath).length === 1)

        // Each slow attempt takes the whole timeout (2 s); the other tenant's delivery need not wait for them.
        expect((await fastApi.post(`/webhooks/${fast.id}/test`)).statusCode).toBe(202)
        await receiver.waitFor(() => receiver.to(fastPath).length === 1, 15_000)
        expect(receiver.to(slowPath).length).toBe(1)
        await waitForDelivery(fastApi, fast.id, (d) => d.status === 'succeeded')
        // Done: the rest of the backlog need not be worked through.
        expect((await slowApi.delete(`/webhooks/${slow.id}`)).statusCode).toBe(204)
      })
    },
    // Two attempts at a time over all endpoints, one per endpoint.
    { webhooks: { retrySchedule: [0], timeoutSeconds: 2, concurrency: 2, allowlist: ['127.0.0.1'] } },
  )
})
