/**
 * The verdict of the device-to-webhook tests: what the devices sent, set against the
 * cloud's raw punch log as the public API lists it, and against the webhooks the receiver got.
 * Every delivery is verified here with the standardwebhooks package and the endpoint's secret, and a
 * copy with its body altered must fail, so the check is one that can fail.
 */
import { isDeepStrictEqual } from 'node:util'
import { Webhook } from 'standardwebhooks'
import { expect } from 'vitest'
import type { Punch } from '../../../shared/punch.js'
import type { ReceivedWebhook } from '../../support/webhook-receiver.js'

/**
 * A punch as its device sent it, with the externalId the agent derives from it
 * (docs/decisions/0025-punch-id.md).
 */
export interface SentPunch {
  /** How it came in: `mqtt`, `serial`, or `api` for a punch the test posted itself. */
  via: string
  deviceId: string | null
  employeeCode: string
  punchType: 'IN' | 'OUT'
  punchedAtMs: number
  externalId: string
}

export interface PunchWebhookVerdict {
  /** Sent, and not in the punch log. */
  missing: string[]
  /** In the punch log more than once (by externalId or by id). */
  duplicated: string[]
  /** In the punch log with another employee, type, instant or device than was sent. */
  altered: string[]
  /** In the punch log, never sent. */
  strangers: string[]
  /** Deliveries whose signature did not verify with the endpoint's secret. */
  unverified: string[]
  /** Deliveries that still verified with their body altered (a check that cannot fail). */
  tamperAccepted: string[]
  /** Deliveries of another type, or a body that is not `{type, timestamp, data}`. */
  malformed: string[]
  /** webhook-ids received more than once, and punch ids told of more than once. */
  repeatedWebhookIds: string[]
  repeatedPunchIds: string[]
  /** Stored punches no webhook told of. */
  untold: string[]
  /** Webhooks whose data differs from the stored punch, or tells of a punch not stored. */
  mismatched: string[]
  counts: { sent: number; stored: number; webhooks: number; verified: number }
}

/** Changes one character of the body: a copy the signature must no longer cover. */
export function tamper(body: string): string {
  return body.includes('"IN"') ? body.replace('"IN"', '"OUT"') : body.replace('"OUT"', '"IN"')
}

/** Whether `new Webhook(secret).verify(body, headers)` accepts the delivery. */
export function verifies(secret: string, body: string, headers: ReceivedWebhook['headers']): boolean {
  try {
    new Webhook(secret).verify(body, headers as Record<string, string>)
    return true
  } catch {
    return false
  }
}

export function judgePunchWebhooks(input: {
  sent: readonly SentPunch[]
  stored: readonly Punch[]
  received: readonly ReceivedWebhook[]
  secret: string
  eventType: string
}): PunchWebhookVerdict {
  const verdict: PunchWebhookVerdict = {
    missing: [],
    duplicated: [],
    altered: [],
    strangers: [],
    unverified: [],
    tamperAccepted: [],
    malformed: [],
    repeatedWebhookIds: [],
    repeatedPunchIds: [],
    untold: [],
    mismatched: [],
    counts: {
      sent: input.sent.length,
      stored: input.stored.length,
      webhooks: input.received.length,
      verified: 0,
    },
  }

  // The punch log against what was sent.
  const storedByExternalId = groupBy(input.stored, (p) => p.externalId ?? '')
  for (const [id, group] of groupBy(input.stored, (p) => p.id)) {
    if (group.length > 1) verdict.duplicated.push(`punch ${id} listed ${group.length} times`)
  }
  const sentByExternalId = new Map(input.sent.map((p) => [p.externalId, p]))
  for (const p of input.sent) {
    const group = storedByExternalId.get(p.externalId) ?? []
    const what = `${p.via} ${p.employeeCode} ${p.punchType} ${new Date(p.punchedAtMs).toISOString()}`
    if (group.length === 0) verdict.missing.push(`${what} (${p.externalId})`)
    if (group.length > 1) verdict.duplicated.push(`${what} stored ${group.length} times`)
    for (const s of group) {
      if (
        s.employeeCode !== p.employeeCode ||
        s.punchType !== p.punchType ||
        Date.parse(s.punchedAt) !== p.punchedAtMs ||
        s.deviceId !== p.deviceId
      ) {
        verdict.altered.push(`${what} stored as ${JSON.stringify(s)}`)
      }
    }
  }
  for (const s of input.stored) {
    if (!sentByExternalId.has(s.externalId ?? '')) verdict.strangers.push(JSON.stringify(s))
  }

  // The webhooks: each verified, each once, each the stored punch.
  const storedById = new Map(input.stored.map((p) => [p.id, p]))
  const toldOf = new Map<string, number>()
  for (const [id, group] of groupBy(input.received, (r) => String(r.headers['webhook-id']))) {
    if (group.length > 1) verdict.repeatedWebhookIds.push(`${id} x${group.length}`)
  }
  for (const r of input.received) {
    const id = String(r.headers['webhook-id'])
    if (verifies(input.secret, r.body, r.headers)) verdict.counts.verified++
    else verdict.unverified.push(id)
    const altered = tamper(r.body)
    if (altered === r.body || verifies(input.secret, altered, r.headers)) verdict.tamperAccepted.push(id)
    const body = r.json
    const data = body?.data as Punch | undefined
    if (
      body?.type !== input.eventType ||
      typeof body.timestamp !== 'string' ||
      Number.isNaN(Date.parse(body.timestamp)) ||
      typeof data?.id !== 'string' ||
      Object.keys(body).sort().join() !== 'data,timestamp,type'
    ) {
      verdict.malformed.push(`${id}: ${r.body.slice(0, 200)}`)
      continue
    }
    toldOf.set(data.id, (toldOf.get(data.id) ?? 0) + 1)
    const stored = storedById.get(data.id)
    if (!stored || !isDeepStrictEqual(data, stored)) {
      verdict.mismatched.push(`${id}: ${JSON.stringify(data)} vs stored ${JSON.stringify(stored)}`)
    }
  }
  for (const [punchId, n] of toldOf) if (n > 1) verdict.repeatedPunchIds.push(`${punchId} x${n}`)
  for (const s of input.stored) if (!toldOf.has(s.id)) verdict.untold.push(`${s.id} (${s.externalId})`)
  return verdict
}

/** Every punch sent is stored once as sent, and told of by exactly one verified webhook with its data. */
export function expectEveryPunchOnceWithOneWebhook(verdict: PunchWebhookVerdict): void {
  const first = (list: string[]) => list.slice(0, 10)
  expect(first(verdict.missing), `${verdict.missing.length} punches sent but not in the punch log`).toEqual(
    [],
  )
  expect(first(verdict.duplicated), `${verdict.duplicated.length} punches stored more than once`).toEqual([])
  expect(first(verdict.altered), `${verdict.altered.length} punches stored otherwise than sent`).toEqual([])
  expect(first(verdict.strangers), `${verdict.strangers.length} stored punches never sent`).toEqual([])
  expect(first(verdict.unverified), `${verdict.unverified.length} webhooks failed verification`).toEqual([])
  expect(first(verdict.tamperAccepted), 'webhooks that verified with an altered body').toEqual([])
  expect(
    first(verdict.malformed),
    `${verdict.malformed.length} webhooks not a ${'{type, timestamp, data}'} punch event`,
  ).toEqual([])
  expect(first(verdict.repeatedWebhookIds), 'webhook-ids received more than once').toEqual([])
  expect(first(verdict.repeatedPunchIds), 'punches told of by more than one webhook').toEqual([])
  expect(first(verdict.untold), `${verdict.untold.length} stored punches no webhook told of`).toEqual([])
  expect(
    first(verdict.mismatched),
    `${verdict.mismatched.length} webhooks whose data is not the stored punch`,
  ).toEqual([])
  const { sent, stored, webhooks, verified } = verdict.counts
  expect(stored).toBe(sent)
  expect(webhooks).toBe(sent)
  expect(verified).toBe(sent)
  expect(sent).toBeGreaterThan(0)
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>()
  for (const item of items) {
    const k = key(item)
    const group = groups.get(k)
    if (group) group.push(item)
    else groups.set(k, [item])
  }
  return groups
}
