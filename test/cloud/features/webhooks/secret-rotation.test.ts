import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { nowMicros, parseTimestamp } from '../../../../shared/time.js'
import { describeEachDatabase } from '../../../support/cloud-harness.js'
import { type ReceivedWebhook, WebhookReceiver } from '../../../support/webhook-receiver.js'
import { auditEntries, type ConsoleClient, createEndpoint, newTenantConsole } from './webhook-kit.js'

// A secret rotation (docs/decisions/0019-standard-webhooks-signatures.md) during which the receiver accepts
// both signatures; the secret revealed to admins with an audit entry.

const receiver = new WebhookReceiver()
beforeAll(() => receiver.start())
afterAll(() => receiver.stop())

/** Sends the test event and returns the request as received. */
async function testDelivery(api: ConsoleClient, endpointId: string, path: string): Promise<ReceivedWebhook> {
  const before = receiver.to(path).length
  const res = await api.post(`/webhooks/${endpointId}/test`)
  expect(res.statusCode).toBe(202)
  await receiver.waitFor(() => receiver.to(path).length > before)
  const request = receiver.to(path)[before] as ReceivedWebhook
  expect(request.headers['webhook-id']).toBe(res.json().messageId)
  return request
}

const signatures = (request: ReceivedWebhook) => (request.headers['webhook-signature'] as string).split(' ')

// Every suite (one per database) and test runs at once: each test has its own tenant and paths.
describe.concurrent('webhook secrets', () => {
  describeEachDatabase(
    'webhook signing secret rotation, in the app clock',
    (cloud) => {
      afterEach(() => {
        cloud.fixedNow = undefined
      })

      it('signs with the old and the new secret during the grace period; either alone verifies; then only the new', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/rotate-${cloud.kind}`
        const { id, secret: oldSecret } = await createEndpoint(api, { url: receiver.url(path) })
        cloud.fixedNow = nowMicros()

        const rotated = await api.post(`/webhooks/${id}/rotate-secret`, { graceSeconds: 3600 })
        expect(rotated.statusCode).toBe(200)
        const { secret: newSecret, previousSecretsExpireAt } = rotated.json()
        expect(newSecret).toMatch(/^whsec_/)
        expect(newSecret).not.toBe(oldSecret)
        expect(parseTimestamp(previousSecretsExpireAt)).toBe(cloud.fixedNow + 3600 * 1_000_000)
        const shown = (await api.get(`/webhooks/${id}`)).json()
        expect(shown.secrets.map((s: { expiresAt: string | null }) => s.expiresAt)).toEqual([
          previousSecretsExpireAt,
          null,
        ])

        // In the grace period: two signatures, and the library verifies with each secret on its own.
        receiver.verifyAt(path, oldSecret, newSecret)
        const during = await testDelivery(api, id, path)
        expect(signatures(during)).toHaveLength(2)
        expect(during.verifiedWith).toEqual([oldSecret, newSecret])

        // The grace period over: only the new secret signs.
        cloud.fixedNow += 3601 * 1_000_000
        const after = await testDelivery(api, id, path)
        expect(signatures(after)).toHaveLength(1)
        expect(after.verifiedWith).toEqual([newSecret])

        const [entry] = await auditEntries(cloud, api.tenantId, 'webhook_endpoint.secret_rotated')
        expect(entry).toMatchObject({
          actor: api.actor,
          target: { type: 'webhook_endpoint', id },
          details: { previousSecretsExpireAt },
        })
        expect(JSON.stringify(entry)).not.toContain(newSecret)
        expect(JSON.stringify(entry)).not.toContain(oldSecret)
      })
    },
    { webhooks: { retrySchedule: [0], allowlist: ['127.0.0.1'] } },
  )

  describeEachDatabase(
    'webhook signing secrets',
    (cloud) => {
      it('with no grace period, only the new secret signs from the rotation on', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/rotate-now-${cloud.kind}`
        const { id, secret: oldSecret } = await createEndpoint(api, { url: receiver.url(path) })
        const rotated = await api.post(`/webhooks/${id}/rotate-secret`, { graceSeconds: 0 })
        expect(rotated.statusCode).toBe(200)
        const newSecret = rotated.json().secret
        receiver.verifyAt(path, oldSecret, newSecret)
        const request = await testDelivery(api, id, path)
        expect(signatures(request)).toHaveLength(1)
        expect(request.verifiedWith).toEqual([newSecret])
      })

      it('rotates with the default grace period of a day when no body is sent', async () => {
        const api = await newTenantConsole(cloud)
        const { id, secret } = await createEndpoint(api, {
          url: receiver.url(`/rotate-nobody-${cloud.kind}`),
        })
        const before = Date.now()
        const res = await api.post(`/webhooks/${id}/rotate-secret`)
        expect(res.statusCode, res.body).toBe(200)
        const rotated = res.json()
        expect(rotated.secret).not.toBe(secret)
        const expires = Date.parse(rotated.previousSecretsExpireAt)
        expect(expires - before).toBeGreaterThanOrEqual(86_400_000 - 1000)
        expect(expires - before).toBeLessThanOrEqual(86_400_000 + 60_000)
      })

      it('refuses a grace period beyond 30 days', async () => {
        const api = await newTenantConsole(cloud)
        const { id, secret } = await createEndpoint(api, { url: receiver.url(`/rotate-bad-${cloud.kind}`) })
        const res = await api.post(`/webhooks/${id}/rotate-secret`, { graceSeconds: 30 * 86_400 + 1 })
        expect(res.statusCode).toBe(400)
        expect(res.json().code).toBe('validation_failed')
        expect((await api.post(`/webhooks/${id}/reveal-secret`)).json().secret).toBe(secret)
      })

      it('reveals the current secret to an admin, with an audit entry', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/reveal-${cloud.kind}`
        const { id, secret } = await createEndpoint(api, { url: receiver.url(path) })
        const revealed = await api.post(`/webhooks/${id}/reveal-secret`)
        expect(revealed.statusCode).toBe(200)
        expect(revealed.json()).toEqual({ secret })

        const rotated = (await api.post(`/webhooks/${id}/rotate-secret`, {})).json().secret
        const again = await api.post(`/webhooks/${id}/reveal-secret`)
        expect(again.json()).toEqual({ secret: rotated })
        // What is revealed is what signs.
        receiver.verifyAt(path, again.json().secret)
        expect((await testDelivery(api, id, path)).verifiedWith).toEqual([rotated])

        const entries = await auditEntries(cloud, api.tenantId, 'webhook_endpoint.secret_revealed')
        expect(entries.map((e) => [e.actor, e.target.id])).toEqual([
          [api.actor, id],
          [api.actor, id],
        ])
        expect(JSON.stringify(entries)).not.toContain('whsec_')
        const elsewhere = await newTenantConsole(cloud)
        expect((await elsewhere.post(`/webhooks/${id}/reveal-secret`)).statusCode).toBe(404)
      })
    },
    { webhooks: { retrySchedule: [0], allowlist: ['127.0.0.1'] } },
  )
})
