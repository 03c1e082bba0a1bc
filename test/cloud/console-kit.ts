/**
 * The console API (/api/console/v1) as tests call it: over HTTP (app.inject), with an admin
 * token of a tenant, as an admin or as a viewer. `actor` is what the audit log must name.
 */
import type { LightMyRequestResponse } from 'fastify'
import type { ConsoleContext } from '../../cloud/auth/console-context.js'
import { TEST_ACTOR, type TestCloud } from '../support/cloud-harness.js'

export const CONSOLE = '/api/console/v1'

export interface ConsoleApi {
  tenantId: string
  token: string
  actor: string
  get(path: string): Promise<LightMyRequestResponse>
  post(path: string, body?: object): Promise<LightMyRequestResponse>
  /** A raw body with its media type (CSV imports). */
  send(path: string, payload: string | Buffer, contentType?: string): Promise<LightMyRequestResponse>
}

function apiFor(cloud: TestCloud, tenantId: string, token: string, tokenId: string): ConsoleApi {
  const authorization = `Bearer ${token}`
  return {
    tenantId,
    token,
    actor: `admin_token:${tokenId}`,
    get: (path) => cloud.app.inject({ method: 'GET', url: `${CONSOLE}${path}`, headers: { authorization } }),
    post: (path, body) =>
      cloud.app.inject({
        method: 'POST',
        url: `${CONSOLE}${path}`,
        headers: { authorization },
        ...(body !== undefined ? { payload: body } : {}),
      }),
    send: (path, payload, contentType = 'text/csv') =>
      cloud.app.inject({
        method: 'POST',
        url: `${CONSOLE}${path}`,
        headers: { authorization, 'content-type': contentType },
        payload,
      }),
  }
}

/** A tenant's console API through a new admin token (role admin). */
export async function adminConsole(cloud: TestCloud, tenantId: string): Promise<ConsoleApi> {
  const { id, token } = await cloud.services.adminTokens.create(tenantId, {}, TEST_ACTOR)
  return apiFor(cloud, tenantId, token, id)
}

const viewerTokens = new WeakMap<object, Set<string>>()

/**
 * A tenant's console API as a viewer. Admin tokens always act as admins, so the app's token
 * authenticator is wrapped once per app to give the tokens made here the viewer role: the console's
 * authentication and role check then run exactly as for a signed-in viewer.
 */
export async function viewerConsole(cloud: TestCloud, tenantId: string): Promise<ConsoleApi> {
  const service = cloud.services.adminTokens
  let tokens = viewerTokens.get(service)
  if (!tokens) {
    const viewers = new Set<string>()
    tokens = viewers
    viewerTokens.set(service, viewers)
    const authenticate = service.authenticate.bind(service)
    service.authenticate = async (token: string, ip: string | null): Promise<ConsoleContext | undefined> => {
      const context = await authenticate(token, ip)
      return context && viewers.has(token) ? { ...context, role: 'viewer' } : context
    }
  }
  const { id, token } = await service.create(tenantId, { name: 'viewer' }, TEST_ACTOR)
  tokens.add(token)
  return apiFor(cloud, tenantId, token, id)
}

/** Every page of a console listing. */
export async function listAll<T>(
  api: ConsoleApi,
  path: string,
  query: Record<string, string> = {},
): Promise<T[]> {
  const all: T[] = []
  let cursor: string | null = null
  do {
    const params = new URLSearchParams({ ...query, limit: '200', ...(cursor ? { cursor } : {}) })
    const res = await api.get(`${path}?${params}`)
    if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${res.body}`)
    const page = res.json() as { data: T[]; nextCursor: string | null }
    all.push(...page.data)
    cursor = page.nextCursor
  } while (cursor !== null)
  return all
}
