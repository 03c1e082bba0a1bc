import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeEachDatabase } from '../../../support/cloud-harness.js'
import { WebhookReceiver } from '../../../support/webhook-receiver.js'
import {
  auditEntries,
  type ConsoleClient,
  catalogValidator,
  createEndpoint,
  listDeliveries,
  newTenantConsole,
  sleep,
  waitForDelivery,
  waitUntil,
} from './webhook-kit.js'

// 410, 3xx, timeouts and auto-disable (docs/decisions/0021-webhook-retries.md), against a real receiver. Each
// test has its own tenant and receiver paths, so they run at once.

const receiver = new WebhookReceiver()
beforeAll(() => receiver.start())
afterAll(() => receiver.stop())

async function endpointStatus(api: ConsoleClient, id: string) {
  const res = await api.get(`/webhooks/${id}`)
  expect(res.statusCode).toBe(200)
  return res.json() as {
    status: string
    disabledReason: string | null
    failingSince: string | null
    updatedAt: string
  }
}

/** An endpoint of the tenant that hears of endpoints being disabled, and what it heard. */
async function watcher(api: ConsoleClient, path: string) {
  const { id, secret } = await createEndpoint(api, {
    url: receiver.url(path),
    events: ['webhook_endpoint.disabled'],
  })
  receiver.respondAt(path, { status: 204 })
  receiver.verifyAt(path, secret)
  return { id, secret, heard: () => receiver.to(path) }
}

// Every suite (one per database) and test runs at once: each test has its own tenant and paths.
describe.concurrent('webhook failures', () => {
  describeEachDatabase(
    'webhook answers that are not a success, and endpoints that keep failing',
    (cloud) => {
      it.concurrent('disables an endpoint that answers 410 Gone: no retry, an audit entry, and an event to the other endpoints', async () => {
        const api = await newTenantConsole(cloud)
        const elsewhere = await newTenantConsole(cloud)
        const goneUrl = receiver.url(`/gone-${cloud.kind}`)
        const gone = await createEndpoint(api, { url: goneUrl })
        const watching = await watcher(api, `/watch-gone-${cloud.kind}`)
        const otherTenant = await watcher(elsewhere, `/watch-gone-elsewhere-${cloud.kind}`)
        receiver.respondAt(`/gone-${cloud.kind}`, { status: 410 })

        expect((await api.post(`/webhooks/${gone.id}/test`)).statusCode).toBe(202)
        await receiver.waitFor(() => watching.heard().length === 1)

        const endpoint = await endpointStatus(api, gone.id)
        expect(endpoint.status).toBe('disabled')
        expect(endpoint.disabledReason).toMatch(/410/)
        const [entry, ...more] = await auditEntries(cloud, api.tenantId, 'webhook_endpoint.disabled')
        expect(more).toEqual([])
        expect(entry).toMatchObject({
          actor: 'system:webhooks',
          target: { type: 'webhook_endpoint', id: gone.id },
          details: { reason: 'gone' },
        })
        const [event] = watching.heard()
        expect(event?.verifiedWith).toEqual([watching.secret])
        expect(event?.json).toMatchObject({
          type: 'webhook_endpoint.disabled',
          data: { endpointId: gone.id, url: goneUrl, reason: 'gone' },
        })
        expect((await catalogValidator(cloud))(event?.json)).toEqual([])

        // A disabled endpoint is not retried, nor told of its own disabling; another tenant hears nothing.
        const delivery = await waitForDelivery(api, gone.id, (d) => d.attempts === 1)
        expect(delivery.attemptLog.map((a) => a.responseStatus)).toEqual([410])
        // Past the time its retry was due, and a few polls more: still the one request.
        await sleep(Math.max(0, Date.parse(delivery.nextAttemptAt ?? '') - Date.now()) + 750)
        expect(receiver.to(`/gone-${cloud.kind}`)).toHaveLength(1)
        expect(otherTenant.heard()).toEqual([])

        // A test event asked for while disabled is held, and sent once the endpoint is resumed.
        receiver.respondAt(`/gone-${cloud.kind}`, { status: 204 })
        const test = await api.post(`/webhooks/${gone.id}/test`)
        expect(test.statusCode).toBe(202)
        await waitUntil(
          async () => (await listDeliveries(api, { endpointId: gone.id, status: 'pending' })).length === 1,
          'the held test delivery',
        )
        expect((await api.post(`/webhooks/${gone.id}/resume`)).statusCode).toBe(200)
        const messageId = test.json().messageId
        await receiver.waitFor(() =>
          receiver.to(`/gone-${cloud.kind}`).some((r) => r.headers['webhook-id'] === messageId),
        )
        expect((await elsewhere.get(`/webhook-deliveries?endpointId=${otherTenant.id}`)).json().data).toEqual(
          [],
        )
      })

      it.concurrent('counts a 3xx as a failure and does not follow the redirect', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/moved-${cloud.kind}`
        const target = `/moved-target-${cloud.kind}`
        const { id } = await createEndpoint(api, { url: receiver.url(path) })
        const statuses = [307, 302]
        receiver.respondAt(path, (_request, index) => ({
          status: statuses[index] ?? 308,
          headers: { location: receiver.url(target) },
        }))
        receiver.respondAt(target, { status: 204 })
        expect((await api.post(`/webhooks/${id}/test`)).statusCode).toBe(202)

        const delivery = await waitForDelivery(api, id, (d) => d.attempts >= 2)
        expect(delivery.attemptLog.slice(0, 2).map((a) => [a.responseStatus, a.error])).toEqual([
          [307, null],
          [302, null],
        ])
        expect(receiver.to(path).length).toBeGreaterThanOrEqual(2)
        expect(receiver.to(target)).toEqual([])
        expect((await endpointStatus(api, id)).failingSince).not.toBeNull()
      })

      it.concurrent('records an attempt the receiver leaves hanging past the timeout as failed, with the error, and retries it', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/hangs-${cloud.kind}`
        const { id } = await createEndpoint(api, { url: receiver.url(path) })
        receiver.respondAt(path, (_request, index) => (index === 0 ? { hang: true } : { status: 200 }))
        expect((await api.post(`/webhooks/${id}/test`)).statusCode).toBe(202)

        const delivery = await waitForDelivery(api, id, (d) => d.status === 'succeeded')
        const [timedOut, succeeded] = delivery.attemptLog
        expect(timedOut).toMatchObject({ number: 1, responseStatus: null, responseBody: null })
        expect(timedOut?.error).toMatch(/timeout|timed out/i)
        // The whole timeout (1 s) was waited for; the answer was not cut short.
        expect(timedOut?.durationMs).toBeGreaterThanOrEqual(950)
        expect(succeeded).toMatchObject({ number: 2, responseStatus: 200, error: null })
        expect(receiver.to(path).map((r) => r.headers['webhook-id'])).toEqual([
          delivery.messageId,
          delivery.messageId,
        ])
        // A success ends the run of failures.
        expect((await endpointStatus(api, id)).failingSince).toBeNull()
      })

      it.concurrent('counts every non-2xx answer as a failure and any 2xx as a success', async () => {
        const api = await newTenantConsole(cloud)
        const outcomes: [number, string][] = [
          [200, 'succeeded'],
          [202, 'succeeded'],
          [299, 'succeeded'],
          [300, 'failed'],
          [400, 'failed'],
          [404, 'failed'],
          [500, 'failed'],
        ]
        // All at once: the failures' retries overlap.
        const endpoints = await Promise.all(
          outcomes.map(async ([status]) => {
            const path = `/status-${cloud.kind}-${status}`
            receiver.respondAt(path, { status })
            const { id } = await createEndpoint(api, { url: receiver.url(path) })
            expect((await api.post(`/webhooks/${id}/test`)).statusCode).toBe(202)
            return id
          }),
        )
        const settled = await Promise.all(
          endpoints.map((id) =>
            // The failing ones are disabled after 2 s, which the others hear of: only the test event counts.
            waitForDelivery(api, id, (d) => d.attempts >= 1, { eventType: 'webhook.test' }),
          ),
        )
        expect(outcomes.map(([status], i) => [status, settled[i]?.status])).toEqual(outcomes)
      })
      it.concurrent('disables an endpoint after disableAfter of continuous failure, tells the others, and resumes it on request', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/failing-${cloud.kind}`
        const failing = await createEndpoint(api, { url: receiver.url(path) })
        const watching = await watcher(api, `/watch-failing-${cloud.kind}`)
        let healthy = false
        receiver.respondAt(path, () => ({ status: healthy ? 204 : 503 }))
        expect((await api.post(`/webhooks/${failing.id}/test`)).statusCode).toBe(202)

        await receiver.waitFor(() => watching.heard().length === 1, 15_000)
        const endpoint = await endpointStatus(api, failing.id)
        expect(endpoint.status).toBe('disabled')
        // disableAfter is 2 s here: the reason says so in seconds (not "0 hours").
        expect(endpoint.disabledReason).toMatch(/^Every attempt failed for \d+ seconds\.$/)
        expect(watching.heard()[0]?.json).toMatchObject({
          type: 'webhook_endpoint.disabled',
          data: { endpointId: failing.id, reason: 'failing' },
        })
        const [entry] = await auditEntries(cloud, api.tenantId, 'webhook_endpoint.disabled')
        expect(entry).toMatchObject({
          actor: 'system:webhooks',
          target: { id: failing.id },
          details: { reason: 'failing' },
        })
        // Disabled before its schedule ran out: the delivery waits, failed, not exhausted.
        const held = await waitForDelivery(api, failing.id, (d) => d.status === 'failed')
        const attemptsWhenDisabled = held.attempts
        expect(attemptsWhenDisabled).toBeGreaterThanOrEqual(2)
        expect(attemptsWhenDisabled).toBeLessThan(7)
        // Disabled (its last change) no sooner than disableAfter after the failures began.
        expect(endpoint.failingSince).not.toBeNull()
        expect(
          Date.parse(endpoint.updatedAt) - Date.parse(endpoint.failingSince ?? ''),
        ).toBeGreaterThanOrEqual(2000)

        // The receiver is fixed; an admin resumes the endpoint; the held delivery goes out.
        healthy = true
        const resumed = await api.post(`/webhooks/${failing.id}/resume`)
        expect(resumed.statusCode).toBe(200)
        expect(resumed.json()).toMatchObject({ status: 'active', disabledReason: null, failingSince: null })
        const delivered = await waitForDelivery(api, failing.id, (d) => d.status === 'succeeded')
        expect(delivered.attempts).toBe(attemptsWhenDisabled + 1)
        expect(receiver.to(path)).toHaveLength(attemptsWhenDisabled + 1)
      })

      it.concurrent('does not disable an endpoint whose failures are broken by a success', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/flaky-${cloud.kind}`
        const flaky = await createEndpoint(api, { url: receiver.url(path) })
        // Every other answer fails, for longer than disableAfter in all.
        receiver.respondAt(path, (_request, index) => ({ status: index % 2 === 0 ? 500 : 200 }))
        for (let i = 0; i < 3; i++) {
          expect((await api.post(`/webhooks/${flaky.id}/test`)).statusCode).toBe(202)
          await waitUntil(
            async () =>
              (await endpointStatus(api, flaky.id)).failingSince === null &&
              receiver.to(path).length >= 2 * (i + 1),
            `test event ${i} delivered`,
          )
        }
        const first = receiver.to(path)[0]?.at ?? 0
        const last = receiver.to(path).at(-1)?.at ?? 0
        expect(last - first).toBeGreaterThanOrEqual(2000)
        expect((await endpointStatus(api, flaky.id)).status).toBe('active')
        expect(await auditEntries(cloud, api.tenantId, 'webhook_endpoint.disabled')).toEqual([])
      })
    },
    {
      webhooks: {
        retrySchedule: [0, 1, 1, 1, 1, 1, 1],
        disableAfterSeconds: 2,
        timeoutSeconds: 1,
        allowlist: ['127.0.0.1'],
      },
    },
  )
})
