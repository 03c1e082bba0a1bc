import { randomBytes } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'
import type { ConsoleRole } from '../../../../shared/console-auth.js'
import { TEST_ACTOR, type TestCloud } from '../../../support/cloud-harness.js'

export const CONSOLE = '/api/console/v1'
export const SESSION_COOKIE = 'hajri_session'

type Method = 'GET' | 'HEAD' | 'POST' | 'PATCH' | 'DELETE'

/**
 * A made-up address per sign-in, so the per-address limits of one test do not reach the next: 24
 * random bits (the last octet 1–254), since two of a test's addresses that happen to be the same
 * share their failures and are held back (16 bits made that about one test run in ten thousand).
 */
export function someAddress(): string {
  const [a = 0, b = 0, c = 0] = randomBytes(3)
  return `10.${a}.${b}.${1 + (c % 254)}`
}

/** A browser signed in to the console: its session cookie and the session's CSRF token. */
export interface Browser {
  cookie: string
  csrfToken: string
  userId: string
  /** A request as the console's page sends it: the cookie, and the CSRF token unless told otherwise. */
  call(
    method: Method,
    path: string,
    options?: { body?: object; csrf?: string | null; headers?: Record<string, string> },
  ): Promise<LightMyRequestResponse>
}

export function signInRequest(
  cloud: TestCloud,
  email: string,
  password: string,
  options: { remoteAddress?: string; headers?: Record<string, string> } = {},
) {
  return cloud.app.inject({
    method: 'POST',
    url: `${CONSOLE}/session`,
    payload: { email, password },
    remoteAddress: options.remoteAddress ?? someAddress(),
    ...(options.headers ? { headers: options.headers } : {}),
  })
}

/** The `hajri_session` cookie a response sets, with its attributes; undefined if it sets none. */
export function sessionCookieOf(res: LightMyRequestResponse) {
  return (res.cookies as { name: string; value: string; [k: string]: unknown }[]).find(
    (c) => c.name === SESSION_COOKIE,
  )
}

export function browserFor(cloud: TestCloud, cookie: string, csrfToken: string, userId: string): Browser {
  return {
    cookie,
    csrfToken,
    userId,
    call: (method, path, options = {}) => {
      const headers: Record<string, string> = { ...options.headers }
      const csrf = options.csrf === undefined ? csrfToken : options.csrf
      if (csrf !== null) headers['x-csrf-token'] = csrf
      return cloud.app.inject({
        method,
        url: `${CONSOLE}${path}`,
        headers,
        cookies: { [SESSION_COOKIE]: cookie },
        ...(options.body !== undefined ? { payload: options.body } : {}),
      })
    },
  }
}

/** Signs in over HTTP; fails the test unless it succeeds. */
export async function signIn(cloud: TestCloud, email: string, password: string): Promise<Browser> {
  const res = await signInRequest(cloud, email, password)
  expect(res.statusCode, res.body).toBe(200)
  const cookie = sessionCookieOf(res)
  expect(cookie).toBeDefined()
  const body = res.json()
  return browserFor(cloud, cookie?.value as string, body.csrfToken, body.user.id)
}

export interface TestUser {
  tenantId: string
  id: string
  email: string
  password: string
}

export const uniqueEmail = (what: string) => `${what}-${randomBytes(5).toString('hex')}@example.test`

/** A new tenant and its first owner, as `hajri-cloud tenant create` makes them (a one-time password). */
export async function newTenant(cloud: TestCloud): Promise<TestUser> {
  const adminEmail = uniqueEmail('owner')
  const created = await cloud.services.tenants.create({ name: `Tenant ${adminEmail}`, adminEmail })
  const owner = await cloud.services.consoleUsers.list(created.tenantId, {})
  return {
    tenantId: created.tenantId,
    id: owner.data[0]?.id as string,
    email: adminEmail,
    password: created.adminPassword,
  }
}

/** A one-time password replaced by a chosen one, over HTTP: a user as they are after their first sign-in. */
export async function activate(cloud: TestCloud, user: TestUser): Promise<TestUser> {
  const browser = await signIn(cloud, user.email, user.password)
  const password = `chosen ${randomBytes(8).toString('hex')}`
  const res = await browser.call('POST', '/session/password', {
    body: { currentPassword: user.password, newPassword: password },
  })
  expect(res.statusCode, res.body).toBe(204)
  return { ...user, password }
}

/** A user of `role` in the tenant, invited by the harness, with a password of their own. */
export async function newUser(cloud: TestCloud, tenantId: string, role: ConsoleRole): Promise<TestUser> {
  const email = uniqueEmail(role)
  const invited = await cloud.services.consoleUsers.invite(
    tenantId,
    { email, role },
    { role: 'owner', actor: TEST_ACTOR },
  )
  return activate(cloud, { tenantId, id: invited.user.id, email, password: invited.temporaryPassword })
}

/** An active owner of a new tenant, signed in. */
export async function signedInOwner(cloud: TestCloud): Promise<{ owner: TestUser; browser: Browser }> {
  const owner = await activate(cloud, await newTenant(cloud))
  return { owner, browser: await signIn(cloud, owner.email, owner.password) }
}

/** A problem response's status and code, for `toEqual` (its message says the body on failure). */
export function problemOf(res: LightMyRequestResponse): { status: number; code: string | undefined } {
  const code = res.body === '' ? undefined : (res.json() as { code?: string }).code
  return { status: res.statusCode, code }
}
