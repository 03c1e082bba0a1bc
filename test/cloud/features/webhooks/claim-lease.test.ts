import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeEachDatabase } from '../../../support/cloud-harness.js'
import { WebhookReceiver } from '../../../support/webhook-receiver.js'
import {
  createEndpoint,
  listDeliveries,
  newTenantConsole,
  showDelivery,
  sleep,
  waitUntil,
} from './webhook-kit.js'

// Several instances dispatch without sending a delivery twice. A claim is a lease
// (docs/decisions/0053-webhook-claims-are-leases.md); an
// attempt that outlives its lease (a stalled process) may find another instance has taken the
// delivery over. Its outcome must then not be written over the new owner's claim and schedule.

const receiver = new WebhookReceiver()
beforeAll(() => receiver.start())
afterAll(() => receiver.stop())

const ANSWER_DELAY_MS = 1000

describe.concurrent('webhook claims', () => {
  describeEachDatabase(
    'an attempt that outlives its claim',
    (cloud) => {
      it('records nothing once another dispatcher holds the delivery, which then sends it with the same webhook-id', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/slow-${cloud.kind}`
        const { id: endpointId } = await createEndpoint(api, { url: receiver.url(path) })
        receiver.respondAt(path, { status: 204, delayMs: ANSWER_DELAY_MS })
        expect((await api.post(`/webhooks/${endpointId}/test`)).statusCode).toBe(202)
        await receiver.waitFor(() => receiver.to(path).length === 1)
        const [delivery] = await listDeliveries(api, { endpointId })
        if (!delivery) throw new Error('no delivery listed')

        // While the answer is on its way, "another instance" claims the delivery, as it would once
        // the first one's lease had run out.
        const otherLease = cloud.now() + 3_600_000_000
        await cloud.database.db
          .updateTable('webhook_deliveries')
          .set({ claimed_until: otherLease })
          .where('id', '=', delivery.id)
          .execute()
        // The answer comes, and the first dispatcher finishes with it.
        await sleep(ANSWER_DELAY_MS + 750)

        const untouched = await showDelivery(api, delivery.id)
        expect(untouched.attempts).toBe(0)
        expect(untouched.attemptLog).toEqual([])
        expect(untouched.status).toBe('pending')
        const row = await cloud.database.db
          .selectFrom('webhook_deliveries')
          .select('claimed_until')
          .where('id', '=', delivery.id)
          .executeTakeFirstOrThrow()
        expect(Number(row.claimed_until)).toBe(otherLease)

        // The other instance dies without an outcome; once its claim lapses the delivery is sent
        // again, with the message id the receiver already had.
        receiver.respondAt(path, { status: 204 })
        await cloud.database.db
          .updateTable('webhook_deliveries')
          .set({ claimed_until: null })
          .where('id', '=', delivery.id)
          .execute()
        await waitUntil(
          async () => (await showDelivery(api, delivery.id)).status === 'succeeded',
          'the delivery sent again',
        )
        const sent = await showDelivery(api, delivery.id)
        expect(sent.attemptLog.map((a) => [a.number, a.responseStatus])).toEqual([[1, 204]])
        const ids = receiver.to(path).map((r) => r.headers['webhook-id'])
        expect(ids).toEqual([sent.messageId, sent.messageId])
      })
    },
    { webhooks: { allowlist: ['127.0.0.1'] } },
  )
})
