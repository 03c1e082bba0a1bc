import { Ajv, type ValidateFunction } from 'ajv'
import formatsPlugin from 'ajv-formats'
import type { LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'
import type { AuditEntry } from '../../../../shared/audit.js'
import type { WebhookDelivery, WebhookDeliveryDetail } from '../../../../shared/webhooks.js'
import { TEST_ACTOR, type TestCloud } from '../../../support/cloud-harness.js'
import type { ReceivedWebhook } from '../../../support/webhook-receiver.js'

export const CONSOLE = '/api/console/v1'

/**
 * The console API as a tenant's admin calls it: over HTTP (app.inject) with an admin token.
 * `actor` is what the audit log must name for this caller.
 */
export interface ConsoleClient {
  tenantId: string
  actor: string
  get(path: string): Promise<LightMyRequestResponse>
  post(path: string, body?: object): Promise<LightMyRequestResponse>
  patch(path: string, body: object): Promise<LightMyRequestResponse>
  delete(path: string): Promise<LightMyRequestResponse>
}

/** A new tenant and an admin token for it: each test works in a tenant of its own. */
export async function newTenantConsole(cloud: TestCloud): Promise<ConsoleClient> {
  return consoleFor(cloud, await cloud.createTenant())
}

/** The console API of a tenant, through a new admin token. */
export async function consoleFor(cloud: TestCloud, tenantId: string): Promise<ConsoleClient> {
  const { id, token } = await cloud.services.adminTokens.create(tenantId, {}, TEST_ACTOR)
  const headers = { authorization: `Bearer ${token}` }
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: object) =>
    cloud.app.inject({
      method,
      url: `${CONSOLE}${path}`,
      headers,
      ...(body !== undefined ? { payload: body } : {}),
    })
  return {
    tenantId,
    actor: `admin_token:${id}`,
    get: (path) => call('GET', path),
    post: (path, body) => call('POST', path, body),
    patch: (path, body) => call('PATCH', path, body),
    delete: (path) => call('DELETE', path),
  }
}

/** Registers an endpoint over the API; fails the test unless it is created. */
export async function createEndpoint(
  api: ConsoleClient,
  input: { url: string; events?: string[]; description?: string },
): Promise<{ id: string; secret: string }> {
  const res = await api.post('/webhooks', input)
  expect(res.statusCode, res.body).toBe(201)
  const { id, secret } = res.json()
  return { id, secret }
}

/** Polls `probe` until it returns something, or fails after `timeoutMs`. */
export async function waitUntil<T>(
  probe: () => Promise<T | undefined | false>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(40)
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The delivery log as the API lists it, every page. */
export async function listDeliveries(
  api: ConsoleClient,
  query: Record<string, string> = {},
): Promise<WebhookDelivery[]> {
  const all: WebhookDelivery[] = []
  let cursor: string | null = null
  do {
    const params = new URLSearchParams({ ...query, limit: '200', ...(cursor ? { cursor } : {}) })
    const res = await api.get(`/webhook-deliveries?${params}`)
    expect(res.statusCode, res.body).toBe(200)
    const page = res.json() as { data: WebhookDelivery[]; nextCursor: string | null }
    all.push(...page.data)
    cursor = page.nextCursor
  } while (cursor !== null)
  return all
}

export async function showDelivery(api: ConsoleClient, id: string): Promise<WebhookDeliveryDetail> {
  const res = await api.get(`/webhook-deliveries/${id}`)
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

/** Waits until the endpoint's only delivery (of this type, if given) satisfies `done`; returns its detail. */
export function waitForDelivery(
  api: ConsoleClient,
  endpointId: string,
  done: (delivery: WebhookDeliveryDetail) => boolean,
  options: { eventType?: string; timeoutMs?: number } = {},
): Promise<WebhookDeliveryDetail> {
  return waitUntil(
    async () => {
      const query: Record<string, string> = { endpointId }
      if (options.eventType) query.eventType = options.eventType
      const [delivery, ...others] = await listDeliveries(api, query)
      expect(others, 'one delivery expected').toEqual([])
      if (!delivery) return undefined
      const detail = await showDelivery(api, delivery.id)
      return done(detail) ? detail : undefined
    },
    `a delivery to ${endpointId} in the state the test expects`,
    options.timeoutMs,
  )
}

/** Every audit entry of the tenant with this action, newest first. */
export async function auditEntries(
  cloud: TestCloud,
  tenantId: string,
  action: AuditEntry['action'],
): Promise<AuditEntry[]> {
  return (await cloud.services.audit.list(tenantId, { action, limit: 200 })).data
}

// ajv-formats is CommonJS with an ES default: under NodeNext its default import is the module.
const addFormats = formatsPlugin as unknown as typeof formatsPlugin.default

/**
 * Checks an event body against the catalog as served to receivers (GET
 * /api/public/v1/webhook-event-types): the JSON Schema a receiver would validate `data` with.
 */
export async function catalogValidator(
  cloud: TestCloud,
): Promise<(body: ReceivedWebhook['json']) => string[]> {
  const res = await cloud.app.inject({ method: 'GET', url: '/api/public/v1/webhook-event-types' })
  expect(res.statusCode).toBe(200)
  const ajv = new Ajv({ allErrors: true, strict: false })
  addFormats(ajv)
  const validators = new Map<string, ValidateFunction>()
  for (const entry of res.json().data as { type: string; schema: object }[]) {
    validators.set(entry.type, ajv.compile(entry.schema))
  }
  return (body) => {
    if (!body) return ['the body is not JSON']
    const problems: string[] = []
    const keys = Object.keys(body).sort()
    if (keys.join(',') !== 'data,timestamp,type') problems.push(`body keys are ${keys.join(',')}`)
    if (Number.isNaN(Date.parse(body.timestamp))) problems.push(`timestamp ${body.timestamp} is not a time`)
    const validate = validators.get(body.type)
    if (!validate) return [...problems, `type ${body.type} is not in the catalog`]
    if (!validate(body.data)) problems.push(ajv.errorsText(validate.errors))
    return problems
  }
}
