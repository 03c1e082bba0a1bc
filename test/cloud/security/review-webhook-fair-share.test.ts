/**
 * Security review, item 1 (Medium): one tenant could stall every tenant's webhooks. All tenants
 * shared the dispatcher's delivery slots with no fair share and no cap on endpoints: 32 endpoints
 * pointed at a server that accepts and never answers delayed another tenant's delivery from 17 ms to
 * 28.5 s. Now a tenant holds at most its share of the slots (HAJRI_WEBHOOK_TENANT_CONCURRENCY), a
 * tenant's endpoints are capped (HAJRI_WEBHOOK_MAX_ENDPOINTS, 409 past it), and connecting has a
 * short timeout of its own.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { type AddressInfo, connect as connectTcp } from 'node:net'
import { Worker } from 'node:worker_threads'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebhookUrlPolicy } from '../../../cloud/features/webhooks/url-policy.js'
import { generateSigningSecret, WebhookSender } from '../../../cloud/features/webhooks/webhook-sender.js'
import { TestCloud } from '../../support/cloud-harness.js'
import { WebhookReceiver } from '../../support/webhook-receiver.js'
import { createEndpoint, newTenantConsole, waitForDelivery } from '../features/webhooks/webhook-kit.js'

/** An HTTP server that takes every request and never answers; it counts them, and those cut off. */
class HangingServer {
  private server: Server | undefined
  readonly open = new Set<IncomingMessage>()
  received = 0
  ended = 0
  private waiters: (() => void)[] = []

  async start(): Promise<void> {
    this.server = createServer((req) => {
      this.received++
      this.open.add(req)
      req.socket.on('close', () => {
        if (this.open.delete(req)) this.ended++
      })
      for (const wake of this.waiters.splice(0)) wake()
    })
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve))
  }

  url(path: string): string {
    const address = this.server?.address() as AddressInfo
    return `http://127.0.0.1:${address.port}${path}`
  }

  /** Resolves once `count` requests have come in. */
  async receivedAtLeast(count: number): Promise<void> {
    while (this.received < count) await new Promise<void>((resolve) => this.waiters.push(resolve))
  }

  async stop(): Promise<void> {
    for (const req of this.open) req.socket.destroy()
    this.server?.closeAllConnections()
    await new Promise((resolve) => this.server?.close(resolve))
  }
}

const SLOTS = 4
const SHARE = 2
const HANGING_ENDPOINTS = 6

describe('webhook delivery slots shared between tenants', () => {
  const hanging = new HangingServer()
  const receiver = new WebhookReceiver()
  // An attempt may take 20 s: the hanging tenant's hold their slots far longer than the other
  // tenant's delivery needs, and (before the fair share) that delivery was sent only after them.
  const cloud = new TestCloud('sqlite', {
    webhooks: {
      retrySchedule: [0],
      allowlist: ['127.0.0.1'],
      timeoutSeconds: 20,
      concurrency: SLOTS,
      tenantConcurrency: SHARE,
      maxEndpointsPerTenant: 3 * HANGING_ENDPOINTS,
    },
  })

  beforeAll(async () => {
    await Promise.all([hanging.start(), receiver.start()])
    await cloud.start()
  })
  afterAll(async () => {
    await hanging.stop()
    await cloud.stop()
    await receiver.stop()
  })

  it("security review #1: one tenant's receivers that never answer hold only its share of the slots; another tenant's delivery goes meanwhile", {
    timeout: 150_000,
  }, async () => {
    const flooding = await newTenantConsole(cloud)
    const other = await newTenantConsole(cloud)
    for (let i = 0; i < HANGING_ENDPOINTS; i++) {
      const { id } = await createEndpoint(flooding, { url: hanging.url(`/hang-${i}`) })
      expect((await flooding.post(`/webhooks/${id}/test`)).statusCode).toBe(202)
    }
    // The flooding tenant's attempts have begun and hang (each would hold its slot for a minute).
    await hanging.receivedAtLeast(SHARE)

    const { id } = await createEndpoint(other, { url: receiver.url('/other') })
    expect((await other.post(`/webhooks/${id}/test`)).statusCode).toBe(202)
    await receiver.waitFor(() => receiver.to('/other').length === 1, 90_000)
    await waitForDelivery(other, id, (d) => d.status === 'succeeded', { timeoutMs: 90_000 })

    // Delivered while every attempt of the flooding tenant still hung: none had ended, and it held
    // its share of the slots, no more, although it had deliveries waiting for all four.
    expect(hanging.ended).toBe(0)
    expect(hanging.open.size).toBe(SHARE)
    expect(hanging.received).toBe(SHARE)
  })

  it('security review #1: refuses an endpoint past the per-tenant cap with 409 webhook_endpoint_limit_reached', async () => {
    const capped = new TestCloud('sqlite', {
      webhooks: { retrySchedule: [0], allowlist: ['127.0.0.1'], maxEndpointsPerTenant: 3 },
    })
    await capped.start()
    try {
      const api = await newTenantConsole(capped)
      const ids: string[] = []
      for (let i = 0; i < 3; i++) ids.push((await createEndpoint(api, { url: receiver.url(`/cap-${i}`) })).id)
      const refused = await api.post('/webhooks', { url: receiver.url('/cap-4') })
      expect(refused.statusCode).toBe(409)
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(refused.json()).toMatchObject({ status: 409, code: 'webhook_endpoint_limit_reached' })
      expect(refused.json().detail).toMatch(/at most 3/)
      expect((await api.get('/webhooks')).json().data).toHaveLength(3)

      // The cap is the tenant's own: another tenant registers, and a deleted endpoint frees a place.
      const neighbour = await newTenantConsole(capped)
      await createEndpoint(neighbour, { url: receiver.url('/cap-neighbour') })
      expect((await api.delete(`/webhooks/${ids[0]}`)).statusCode).toBe(204)
      await createEndpoint(api, { url: receiver.url('/cap-again') })
    } finally {
      await capped.stop()
    }
  })
})

/**
 * A listener whose accept queue is full: a thread binds it with a backlog of 1 and then blocks, so
 * nothing is ever accepted. Once the kernel's queue is full, Linux drops further SYNs (the client
 * retransmits them), which is what a receiver behind a firewall that drops packets looks like: the
 * connection is never made, and only a connect timeout ends the attempt.
 */
async function unacceptingListener(): Promise<{ port: number; close: () => Promise<void> }> {
  const worker = new Worker(
    `const { createServer } = require('node:net')
     const { parentPort } = require('node:worker_threads')
     const server = createServer()
     server.listen({ host: '127.0.0.1', port: 0, backlog: 1 }, () => {
       parentPort.postMessage(server.address().port)
       Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)
     })`,
    { eval: true },
  )
  const port = await new Promise<number>((resolve) => worker.once('message', resolve))
  // Fill the queue (backlog + 1 connections on Linux): they complete in the kernel and are never
  // accepted; a third is left hanging like the attempt below.
  const fillers = Array.from({ length: 3 }, () => connectTcp(port, '127.0.0.1').on('error', () => {}))
  await Promise.all(
    fillers.slice(0, 2).map((socket) => new Promise((resolve) => socket.once('connect', resolve))),
  )
  return {
    port,
    close: async () => {
      for (const socket of fillers) socket.destroy()
      await worker.terminate()
    },
  }
}

describe('connecting to a receiver', () => {
  it('security review #1: a receiver that never completes the connection is given up at the connect timeout, not the response timeout', async () => {
    const listener = await unacceptingListener()
    const policy = new WebhookUrlPolicy(['127.0.0.1'])
    try {
      // With only the 60 s response timeout, this attempt would outlast the test.
      const sender = new WebhookSender({ policy, timeoutSeconds: 60, connectTimeoutSeconds: 1 })
      const result = await sender.send(`http://127.0.0.1:${listener.port}/hook`, 'msg_connect', '{}', [
        generateSigningSecret(),
      ])
      expect(result.status).toBeNull()
      expect(result.error).toBe('ETIMEDOUT: no connection within the connect timeout')
    } finally {
      policy.close()
      await listener.close()
    }
  }, 30_000)
})
