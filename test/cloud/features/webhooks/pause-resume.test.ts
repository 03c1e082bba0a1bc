import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeEachDatabase, employee } from '../../../support/cloud-harness.js'
import { WebhookReceiver } from '../../../support/webhook-receiver.js'
import { auditEntries, createEndpoint, listDeliveries, newTenantConsole } from './webhook-kit.js'

// A paused endpoint holds its deliveries and sends them, in order, when it is resumed
// (docs/decisions/0042-webhook-event-and-endpoint-semantics.md).

const receiver = new WebhookReceiver()
beforeAll(() => receiver.start())
afterAll(() => receiver.stop())

// Every suite (one per database) and test runs at once: each test has its own tenant and paths.
describe.concurrent('pausing webhook endpoints', () => {
  describeEachDatabase(
    'pausing a webhook endpoint',
    (cloud) => {
      it('holds deliveries while paused and sends them oldest first on resume', async () => {
        const api = await newTenantConsole(cloud)
        const pausedPath = `/paused-${cloud.kind}`
        const activePath = `/active-${cloud.kind}`
        const paused = await createEndpoint(api, {
          url: receiver.url(pausedPath),
          events: ['employee.created'],
        })
        await createEndpoint(api, {
          url: receiver.url(activePath),
          events: ['employee.created'],
        })
        receiver.verifyAt(pausedPath, paused.secret)

        const pause = await api.post(`/webhooks/${paused.id}/pause`)
        expect(pause.statusCode).toBe(200)
        expect(pause.json().status).toBe('paused')
        // A test event to the paused endpoint, then five changes, each in its own transaction.
        const test = await api.post(`/webhooks/${paused.id}/test`)
        expect(test.statusCode).toBe(202)
        const codes = ['P05', 'P01', 'P04', 'P02', 'P03']
        for (const code of codes) await cloud.upsertEmployees(api.tenantId, [employee(code)])

        // The dispatcher is at work: the active endpoint has had every event by now.
        await receiver.waitFor(() => receiver.to(activePath).length === codes.length)
        expect(receiver.to(pausedPath)).toEqual([])
        const held = await listDeliveries(api, { endpointId: paused.id })
        expect(held).toHaveLength(codes.length + 1)
        expect(held.every((d) => d.status === 'pending' && d.attempts === 0)).toBe(true)

        const resume = await api.post(`/webhooks/${paused.id}/resume`)
        expect(resume.statusCode).toBe(200)
        expect(resume.json().status).toBe('active')
        await receiver.waitFor(() => receiver.to(pausedPath).length === codes.length + 1)
        const sent = receiver.to(pausedPath)
        expect(sent.map((r) => r.json?.type)).toEqual([
          'webhook.test',
          ...codes.map(() => 'employee.created'),
        ])
        expect(sent[0]?.headers['webhook-id']).toBe(test.json().messageId)
        expect(sent.slice(1).map((r) => r.json?.data.employeeCode)).toEqual(codes)
        expect(sent.every((r) => r.verifiedWith.length === 1)).toBe(true)

        for (const action of ['webhook_endpoint.paused', 'webhook_endpoint.resumed'] as const) {
          const entries = await auditEntries(cloud, api.tenantId, action)
          expect(entries.map((e) => [e.actor, e.target.id])).toEqual([[api.actor, paused.id]])
        }
      })

      it('sends nothing to a deleted endpoint, and keeps its deliveries in the log', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/deleted-${cloud.kind}`
        const { id } = await createEndpoint(api, { url: receiver.url(path) })
        const watcherPath = `/deleted-watcher-${cloud.kind}`
        await createEndpoint(api, { url: receiver.url(watcherPath), events: ['employee.created'] })
        expect((await api.post(`/webhooks/${id}/pause`)).statusCode).toBe(200)
        await cloud.upsertEmployees(api.tenantId, [employee('D01')])
        await receiver.waitFor(() => receiver.to(watcherPath).length === 1)
        expect((await api.delete(`/webhooks/${id}`)).statusCode).toBe(204)
        expect((await api.get(`/webhooks/${id}`)).statusCode).toBe(404)
        await cloud.upsertEmployees(api.tenantId, [employee('D02')])
        await receiver.waitFor(() => receiver.to(watcherPath).length === 2)
        expect(receiver.to(path)).toEqual([])
        const log = await listDeliveries(api, { endpointId: id })
        expect(log.map((d) => [d.eventType, d.status])).toEqual([['employee.created', 'pending']])
      })
    },
    { webhooks: { retrySchedule: [0, 1], allowlist: ['127.0.0.1'] } },
  )
})
