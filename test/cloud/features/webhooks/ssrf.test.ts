import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebhookUrlPolicy } from '../../../../cloud/features/webhooks/url-policy.js'
import { generateSigningSecret, WebhookSender } from '../../../../cloud/features/webhooks/webhook-sender.js'
import { describeEachDatabase } from '../../../support/cloud-harness.js'
import { WebhookReceiver } from '../../../support/webhook-receiver.js'
import { createEndpoint, newTenantConsole, waitForDelivery } from './webhook-kit.js'

// SSRF (docs/decisions/0022-webhook-ssrf-guard.md). 127.0.0.1, [::1], 10.0.0.1, 169.254.169.254 and a host
// name that resolves to loopback are all refused: at registration where the URL says so, and in any case when
// connecting.

const receiver = new WebhookReceiver()
beforeAll(() => receiver.start())
afterAll(() => receiver.stop())

/** A refusal by request-filtering-agent, on the address actually connected to. */
const FILTERED = /is not allowed/

describeEachDatabase(
  'webhook URLs without an allowlist',
  (cloud) => {
    it('refuses to register URLs that name a loopback, private, link-local or metadata address', async () => {
      const api = await newTenantConsole(cloud)
      const refused = [
        `http://127.0.0.1:${receiver.port}/hook`,
        'https://127.0.0.1/hook',
        'https://[::1]/hook',
        'http://[::1]/hook',
        'https://10.0.0.1/hook',
        'https://192.168.1.20/hook',
        'https://169.254.169.254/latest/meta-data/',
        'https://[fe80::1]/hook',
        'https://[::ffff:127.0.0.1]/hook',
        'https://0.0.0.0/hook',
        // Other spellings of 127.0.0.1, which URL parsing turns into it.
        'https://2130706433/hook',
        'https://0x7f.1/hook',
        // Plain http anywhere, and no credentials in the URL.
        'http://hooks.example.com/hook',
        'https://user:pass@hooks.example.com/hook',
      ]
      for (const url of refused) {
        const res = await api.post('/webhooks', { url })
        expect([url, res.statusCode]).toEqual([url, 400])
        expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '#/url' }] })
      }
      // Nor may an endpoint be changed to one.
      const { id } = await createEndpoint(api, { url: 'https://hooks.example.com/hook' })
      for (const url of ['https://169.254.169.254/', 'https://[::1]:8443/']) {
        const res = await api.patch(`/webhooks/${id}`, { url })
        expect([url, res.statusCode]).toEqual([url, 400])
      }
      expect((await api.get(`/webhooks/${id}`)).json().url).toBe('https://hooks.example.com/hook')
    })

    it('lets a host name through registration, and refuses it when connecting if it resolves to loopback', async () => {
      const api = await newTenantConsole(cloud)
      const connectionsBefore = receiver.connections
      const { id } = await createEndpoint(api, { url: `https://localhost:${receiver.port}/hook` })
      expect((await api.post(`/webhooks/${id}/test`)).statusCode).toBe(202)
      const delivery = await waitForDelivery(api, id, (d) => d.attempts >= 1)
      expect(delivery.attemptLog[0]).toMatchObject({ responseStatus: null, responseBody: null })
      expect(delivery.attemptLog[0]?.error).toMatch(FILTERED)
      // Not a failed TLS handshake with the receiver: no connection was made at all.
      expect(receiver.connections).toBe(connectionsBefore)
    })
  },
  { webhooks: { retrySchedule: [0], allowlist: [] } },
)

describe('WebhookSender through the URL policy', () => {
  const send = async (allowlist: string[], url: string) => {
    const policy = new WebhookUrlPolicy(allowlist)
    try {
      return await new WebhookSender({ policy, timeoutSeconds: 2 }).send(url, 'msg_test', '{}', [
        generateSigningSecret(),
      ])
    } finally {
      policy.close()
    }
  }

  it('refuses at connect time what registration would have refused, had the URL got in some other way', async () => {
    const before = { connections: receiver.connections, requests: receiver.received.length }
    const port = receiver.port
    for (const url of [
      `http://127.0.0.1:${port}/direct`,
      `http://localhost:${port}/direct`,
      `http://[::1]:${port}/direct`,
      `https://127.0.0.1:${port}/direct`,
      'http://10.0.0.1/direct',
      'http://169.254.169.254/latest/meta-data/',
    ]) {
      const result = await send([], url)
      expect([url, result.status]).toEqual([url, null])
      expect(result.error, url).toMatch(FILTERED)
    }
    expect(receiver.connections).toBe(before.connections)
    expect(receiver.received).toHaveLength(before.requests)
  })

  it('connects where the allowlist says, and only there', async () => {
    receiver.respond({ status: 204 })
    const path = '/allowlisted'
    const allowed = await send(['127.0.0.1'], receiver.url(path))
    expect(allowed).toMatchObject({ status: 204, error: null })
    expect(receiver.to(path)).toHaveLength(1)
    // A CIDR that does not cover the address opens nothing.
    const elsewhere = await send(['10.0.0.0/8'], receiver.url(path))
    expect(elsewhere.error).toMatch(FILTERED)
    const covered = await send(['127.0.0.0/8'], receiver.url(path))
    expect(covered.status).toBe(204)
    expect(receiver.to(path)).toHaveLength(2)
  })

  it('checks registrations against the allowlist the same way', () => {
    const none = new WebhookUrlPolicy([])
    const local = new WebhookUrlPolicy(['127.0.0.1', 'hooks.internal'])
    try {
      expect(none.check('https://hooks.example.com/x').ok).toBe(true)
      expect(none.check('http://127.0.0.1/x').ok).toBe(false)
      expect(local.check('http://127.0.0.1:8080/x').ok).toBe(true)
      expect(local.check('http://hooks.internal/x').ok).toBe(true)
      expect(local.check('http://127.0.0.2/x').ok).toBe(false)
      expect(local.check('https://10.0.0.1/x').ok).toBe(false)
    } finally {
      none.close()
      local.close()
    }
  })
})
