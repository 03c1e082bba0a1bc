import type { Scope } from '../../shared/scopes.js'
import { AppError } from '../app-error.js'
import type { Actor } from '../auth/actor.js'
import type { Executor } from '../db/executor.js'
import { verifyPassword } from '../features/users/password.js'
import type { Services } from '../services.js'
import { Stores } from '../stores.js'
import type { DemoCredentials } from './demo-credentials.js'
import { DEMO_EMPLOYEES } from './demo-employees.js'

export const DEMO_TENANT_NAME = 'Demo Factory'
const DEMO_TIME_ZONE = 'Asia/Kolkata'
export const DEMO_OWNER_EMAIL = 'demo@hajri.local'
export const DEMO_AGENT_APP_NAME = 'Demo site agent'
const DEMO_API_KEY_NAME = 'Demo HR backend'
const AGENT_SCOPES: Scope[] = ['attendance:write']
const API_KEY_SCOPES: Scope[] = ['employees:read', 'attendance:read', 'attendance:write', 'attendance:admin']
/** The demo's one shift, assigned to everyone: a factory's general shift with a lunch hour. */
const DEMO_SHIFT = { code: 'GEN', name: 'General', start: '09:00', end: '18:00', unpaidBreakMinutes: 60 }
/** A year: long enough that a demo left on a laptop keeps working; an expired key is replaced at start. */
const API_KEY_LIFETIME_SECONDS = 365 * 86_400

/** The console owner's password as far as the demo knows it. */
export type OwnerPassword =
  | { kind: 'one-time'; password: string }
  /** They signed in and chose their own: only they know it. */
  | { kind: 'chosen' }
  /** The owner is not in the tenant any more, or has a one-time password we do not know (reset since). */
  | { kind: 'unknown' }

export interface DemoSeed {
  credentials: DemoCredentials & Required<Pick<DemoCredentials, 'agent' | 'apiKey'>>
  /** What this run did, in order, for the log (`tenant created`, `api key created`, ...). */
  done: string[]
  owner: OwnerPassword
}

interface DemoSeedDeps {
  services: Pick<
    Services,
    'tenants' | 'employees' | 'oauthApps' | 'apiKeys' | 'consoleUsers' | 'attendanceConfig'
  >
  /**
   * Read only, for what no service answers: does a tenant exist, whose is an email, and does the
   * one-time password we kept still match the owner's.
   */
  db: Executor
  actor: Actor
  /** Keeps the credentials (demo-credentials.json); called after every step that changed them. */
  save: (credentials: DemoCredentials) => Promise<void>
}

/**
 * Makes sure the demo tenant and everything `npm start` shows exist, and returns their
 * credentials. Every step first looks for what an earlier run made, so it is idempotent, and a run
 * stopped between two steps (Ctrl-C, a crash) is completed by the next one rather than failing on
 * what it left behind:
 *
 * - the tenant: the one in the file if the database still has it; else, when the owner's email is
 *   taken (a run stopped before the file was written, or the file deleted), that owner's tenant,
 *   with a new one-time password; else a new tenant (first run, or the database was deleted);
 * - employees: added when the tenant has none, so changes made in the console are kept;
 * - the agent's OAuth app and the API key: those in the file while they still work; an app without a
 *   secret we know gets a new one (rotated, no grace); a key that is gone or expired, a new key.
 */
export async function seedDemo(previous: DemoCredentials | undefined, deps: DemoSeedDeps): Promise<DemoSeed> {
  const done: string[] = []
  const stores = new Stores(deps.db)
  let credentials = await ensureTenant(previous, deps, stores, done)
  const tenantId = credentials.tenant.id

  const existing = await deps.services.employees.list(tenantId, { limit: 1 })
  if (existing.data.length === 0) {
    await deps.services.employees.upsert(tenantId, DEMO_EMPLOYEES)
    done.push(`${DEMO_EMPLOYEES.length} employees added`)
  }
  // A shift for everyone, so that the attendance page has schedules to judge punches by; left
  // alone once there is any, so that settings changed in the console are kept.
  const shifts = await deps.services.attendanceConfig.listShifts(tenantId)
  if (shifts.data.length === 0) {
    await deps.services.attendanceConfig.createShift(tenantId, DEMO_SHIFT, deps.actor)
    await deps.services.attendanceConfig.createAssignment(
      tenantId,
      { shiftCode: DEMO_SHIFT.code, effectiveFrom: '2020-01-01' },
      deps.actor,
    )
    done.push(`shift ${DEMO_SHIFT.code} assigned to everyone`)
  }

  const agent = await ensureAgentApp(credentials, deps, done)
  if (agent !== credentials.agent) {
    credentials = { ...credentials, agent }
    await deps.save(credentials)
  }
  const apiKey = await ensureApiKey(credentials, deps, done)
  if (apiKey !== credentials.apiKey) {
    credentials = { ...credentials, apiKey }
    await deps.save(credentials)
  }
  return {
    credentials: { ...credentials, agent, apiKey },
    done,
    owner: await ownerPassword(credentials, stores),
  }
}

async function ensureTenant(
  previous: DemoCredentials | undefined,
  deps: DemoSeedDeps,
  stores: Stores,
  done: string[],
): Promise<DemoCredentials> {
  if (previous && (await stores.tenants.get(previous.tenant.id))) return previous
  let credentials: DemoCredentials
  try {
    // Emails are unique within a tenant only, so creating would not refuse a second demo tenant:
    // the owner's email, if a user has it, names the tenant an earlier run made.
    if (await stores.consoleUsers.findByEmailForSignIn(DEMO_OWNER_EMAIL))
      throw new AppError('console_user_exists', `${DEMO_OWNER_EMAIL} is a console user already.`)
    const created = await deps.services.tenants.create({
      name: DEMO_TENANT_NAME,
      adminEmail: DEMO_OWNER_EMAIL,
      timeZone: DEMO_TIME_ZONE,
    })
    credentials = {
      tenant: { id: created.tenantId, name: DEMO_TENANT_NAME },
      owner: { email: created.adminEmail, oneTimePassword: created.adminPassword },
    }
    done.push(`tenant ${created.tenantId} created`)
  } catch (err) {
    if (!(err instanceof AppError && err.code === 'console_user_exists')) throw err
    const owner = await stores.consoleUsers.findByEmailForSignIn(DEMO_OWNER_EMAIL)
    if (!owner) throw err
    const reset = await deps.services.consoleUsers.resetPassword(
      owner.tenant_id,
      DEMO_OWNER_EMAIL,
      deps.actor,
    )
    credentials = {
      tenant: { id: owner.tenant_id, name: DEMO_TENANT_NAME },
      owner: { email: DEMO_OWNER_EMAIL, oneTimePassword: reset.temporaryPassword },
    }
    done.push(`tenant ${owner.tenant_id} found by its owner's email; owner password reset`)
  }
  // Saved at once: the one-time password is never shown again by the cloud.
  await deps.save(credentials)
  return credentials
}

async function ensureAgentApp(
  credentials: DemoCredentials,
  deps: DemoSeedDeps,
  done: string[],
): Promise<NonNullable<DemoCredentials['agent']>> {
  const tenantId = credentials.tenant.id
  const { oauthApps } = deps.services
  const known = credentials.agent
  if (known) {
    const client = await oauthApps.authenticateClient(known.clientId, known.clientSecret)
    if (client?.tenant.id === tenantId && client.app.id === known.appId) return known
  }
  // The app is there but we lost its secret (or it was rotated in the console): a new one, at once.
  const app = (await oauthApps.list(tenantId)).find(
    (a) => a.name === DEMO_AGENT_APP_NAME && a.status === 'active',
  )
  if (app) {
    const rotated = await oauthApps.rotateSecret(tenantId, app.id, deps.actor, 0)
    done.push(`OAuth app ${app.id}: new client secret`)
    return { appId: app.id, clientId: rotated.clientId, clientSecret: rotated.clientSecret }
  }
  const created = await oauthApps.create(
    tenantId,
    { name: DEMO_AGENT_APP_NAME, scopes: AGENT_SCOPES },
    deps.actor,
  )
  done.push(`OAuth app ${created.id} created`)
  return { appId: created.id, clientId: created.clientId, clientSecret: created.clientSecret }
}

async function ensureApiKey(
  credentials: DemoCredentials,
  deps: DemoSeedDeps,
  done: string[],
): Promise<NonNullable<DemoCredentials['apiKey']>> {
  const tenantId = credentials.tenant.id
  const known = credentials.apiKey
  if (known) {
    try {
      if ((await deps.services.apiKeys.get(tenantId, known.id)).status === 'active') return known
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'api_key_not_found')) throw err
    }
  }
  const created = await deps.services.apiKeys.create(
    tenantId,
    { name: DEMO_API_KEY_NAME, scopes: API_KEY_SCOPES, expiresInSeconds: API_KEY_LIFETIME_SECONDS },
    deps.actor,
  )
  done.push(`API key ${created.id} created`)
  return { id: created.id, key: created.key }
}

/**
 * "Must change password" stays on the user until they choose one at their first sign-in. The
 * one-time password in the file is shown only while it still opens the console: after
 * `hajri-cloud user reset-password` the owner has another one, which that command printed.
 */
async function ownerPassword(credentials: DemoCredentials, stores: Stores): Promise<OwnerPassword> {
  const owner = await stores.consoleUsers.getByEmail(credentials.tenant.id, credentials.owner.email)
  if (!owner) return { kind: 'unknown' }
  if (owner.must_change_password === 0) return { kind: 'chosen' }
  const password = credentials.owner.oneTimePassword
  if (password && (await verifyPassword(password, owner.password_hash))) return { kind: 'one-time', password }
  return { kind: 'unknown' }
}
