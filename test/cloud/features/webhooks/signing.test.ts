import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateSigningSecret } from '../../../../cloud/features/webhooks/webhook-sender.js'
import { bearer, describeEachDatabase, employee } from '../../../support/cloud-harness.js'
import { WebhookReceiver } from '../../../support/webhook-receiver.js'
import { catalogValidator, createEndpoint, newTenantConsole, waitForDelivery } from './webhook-kit.js'

// The signature (docs/decisions/0019-standard-webhooks-signatures.md) verified by the standardwebhooks
// library, against a real receiver.

const receiver = new WebhookReceiver()
beforeAll(() => receiver.start())
afterAll(() => receiver.stop())

// Every suite (one per database) and test runs at once: each test has its own tenant and paths.
describe.concurrent('webhook signing', () => {
  describeEachDatabase(
    'webhook signing and body',
    (cloud) => {
      it('signs a punch per Standard Webhooks v1: the standardwebhooks package verifies it with the endpoint secret', async () => {
        const api = await newTenantConsole(cloud)
        const key = await cloud.createApiKey(api.tenantId)
        await cloud.upsertEmployees(api.tenantId, [employee('E001')])
        const path = `/sign-${cloud.kind}`
        const { id, secret } = await createEndpoint(api, {
          url: receiver.url(path),
          events: ['attendance.punch.created'],
        })
        expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
        // A second secret the receiver also tries: only the endpoint's own may verify.
        receiver.verifyAt(path, secret, generateSigningSecret())
        receiver.respondAt(path, { status: 204 })
        const punch = await cloud.app.inject({
          method: 'POST',
          url: '/api/public/v1/attendance/punches',
          headers: bearer(key),
          payload: { employeeCode: 'E001', punchType: 'IN', externalId: `sign-${cloud.kind}` },
        })
        expect(punch.statusCode).toBe(201)

        await receiver.waitFor(() => receiver.to(path).length === 1)
        const [request] = receiver.to(path)
        if (!request) throw new Error('no request')
        expect(request.verifiedWith).toEqual([secret])
        expect(request.headers['content-type']).toBe('application/json')
        expect(request.headers['webhook-id']).toMatch(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/)
        expect(request.headers['webhook-timestamp']).toMatch(/^\d{10}$/)
        // One secret, so one signature: `v1,` and a base64 HMAC-SHA256 (32 bytes).
        const signature = request.headers['webhook-signature'] as string
        expect(signature).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
        // The spec's construction, by hand: HMAC-SHA256 keyed by the secret's base64 bytes, over id.timestamp.body.
        const hmacKey = Buffer.from(secret.slice('whsec_'.length), 'base64')
        const signed = `${request.headers['webhook-id']}.${request.headers['webhook-timestamp']}.${request.body}`
        expect(signature).toBe(`v1,${createHmac('sha256', hmacKey).update(signed).digest('base64')}`)

        expect(request.json?.type).toBe('attendance.punch.created')
        expect(request.json?.data).toEqual(punch.json())
        const validate = await catalogValidator(cloud)
        expect(validate(request.json)).toEqual([])

        const delivery = await waitForDelivery(api, id, (d) => d.status === 'succeeded')
        expect(delivery.messageId).toBe(request.headers['webhook-id'])
        expect(delivery.body).toBe(request.body)
      })

      it('sends the same webhook-id, body and a fresh valid signature on every retry of a delivery', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/retry-id-${cloud.kind}`
        const { id, secret } = await createEndpoint(api, { url: receiver.url(path) })
        receiver.verifyAt(path, secret)
        // Two failures, then a success: three attempts of one delivery.
        receiver.respondAt(path, (_request, index) => ({ status: index < 2 ? 500 : 200 }))
        const test = await api.post(`/webhooks/${id}/test`)
        expect(test.statusCode).toBe(202)
        const { messageId } = test.json()

        await receiver.waitFor(() => receiver.to(path).length === 3)
        const attempts = receiver.to(path)
        expect(attempts.map((r) => r.headers['webhook-id'])).toEqual([messageId, messageId, messageId])
        expect(new Set(attempts.map((r) => r.body)).size).toBe(1)
        for (const attempt of attempts) expect(attempt.verifiedWith).toEqual([secret])

        const delivery = await waitForDelivery(api, id, (d) => d.status === 'succeeded')
        expect(delivery.messageId).toBe(messageId)
        expect(delivery.attemptLog.map((a) => a.responseStatus)).toEqual([500, 500, 200])
      })

      it('sends the test event to the one endpoint asked, with a body that matches the catalog', async () => {
        const api = await newTenantConsole(cloud)
        const asked = await createEndpoint(api, { url: receiver.url(`/test-asked-${cloud.kind}`) })
        const other = await createEndpoint(api, { url: receiver.url(`/test-other-${cloud.kind}`) })
        receiver.verifyAt(`/test-asked-${cloud.kind}`, asked.secret)
        receiver.respondAt(`/test-asked-${cloud.kind}`, { status: 200 })
        const res = await api.post(`/webhooks/${asked.id}/test`)
        expect(res.statusCode).toBe(202)

        await waitForDelivery(api, asked.id, (d) => d.status === 'succeeded')
        const [request] = receiver.to(`/test-asked-${cloud.kind}`)
        expect(request?.verifiedWith).toEqual([asked.secret])
        expect(request?.headers['webhook-id']).toBe(res.json().messageId)
        expect(request?.json).toMatchObject({
          type: 'webhook.test',
          data: { endpointId: asked.id, requestedBy: api.actor },
        })
        expect((await catalogValidator(cloud))(request?.json)).toEqual([])
        // Deliveries of an event are made together, so the other endpoint would have one by now.
        const others = await api.get(`/webhook-deliveries?endpointId=${other.id}`)
        expect(others.json().data).toEqual([])
        expect(receiver.to(`/test-other-${cloud.kind}`)).toEqual([])
      })
    },
    { webhooks: { retrySchedule: [0, 0, 0, 1], allowlist: ['127.0.0.1'] } },
  )
})
