/**
 * The verdict of the webhook crash test (webhook-crash.test.ts): what the receiver got, set against
 * what the database says was emitted, delivered, attempted and, at each kill, claimed. A request is
 * one of a delivery's logged attempts, or one whose outcome a kill kept from being written; the
 * latter are bounded by the claims the dead processes held on that delivery.
 */
import { expect } from 'vitest'
import type { ReceivedWebhook } from '../../support/webhook-receiver.js'
import type { WebhookFixture, WebhookRecord } from './webhook-fixture.js'

/** How a kill is timed: see webhook-crash.test.ts. */
export type KillMode = 'on-receipt' | 'after-answer' | 'random' | 'startup'

export interface KillRecord {
  n: number
  mode: KillMode
  /** Receiver requests (path webhook-id) that had not been answered at the kill. */
  unanswered: string[]
  /**
   * Requests the receiver got from the kill until the next process started, as indexes [from, to)
   * into its log: sent by the dead process, read by the receiver only after the kill.
   */
  arrivedAfter: { from: number; to: number }
  /** Deliveries claimed in the database after the kill (id → claimed_until): attempts in flight. */
  claims: Map<string, number>
}

/** What the receiver got, set against the database's events, deliveries, attempts and claims at kills. */
export function judgeDeliveries(
  fixture: WebhookFixture,
  record: WebhookRecord,
  received: readonly ReceivedWebhook[],
  kills: readonly KillRecord[],
) {
  const endpointById = new Map(fixture.endpoints.map((e) => [e.id, e]))
  const eventById = new Map(record.events.map((e) => [e.id, e]))
  const keyOfReceipt = (r: ReceivedWebhook) => `${r.path} ${String(r.headers['webhook-id'])}`
  const receipts = groupBy(received, keyOfReceipt)
  const attempts = groupBy(record.attempts, (a) => a.delivery_id)
  // A claim is one process's hold on a delivery; on PostgreSQL one outlives its process until its
  // lease runs out, so claims are counted by their value, not by the kills that saw them.
  const claims = new Map<string, Set<number>>()
  for (const kill of kills) {
    for (const [id, until] of kill.claims) claims.set(id, (claims.get(id) ?? new Set()).add(until))
  }
  const unansweredAtKills = new Set(kills.flatMap((k) => k.unanswered))
  const arrivedAfterKills = kills.map((k) => received.slice(k.arrivedAfter.from, k.arrivedAfter.to))
  const arrivedAfterAKill = new Set(arrivedAfterKills.flat().map(keyOfReceipt))
  const keys = new Set<string>()
  const result = {
    lost: [] as string[],
    strangers: [] as string[],
    mismatched: [] as string[],
    badLog: [] as string[],
    unexplained: [] as string[],
    inFlightNotClaimed: [] as string[],
    receivedMoreThanOnce: 0,
    loggedRetries: 0,
    duplicates: 0,
    duplicatedDeliveries: 0,
    duplicatesUnanswered: 0,
    duplicatesArrivedAfter: 0,
    duplicatesAnsweredUnwritten: 0,
  }
  const keyOfDelivery = new Map<string, string>()
  for (const d of record.deliveries) {
    const endpoint = endpointById.get(d.endpoint_id)
    const event = eventById.get(d.event_id)
    const key = `${endpoint?.path} ${d.event_id}`
    keys.add(key)
    keyOfDelivery.set(key, d.id)
    const got = receipts.get(key) ?? []
    const logged = attempts.get(d.id) ?? []
    if (got.length === 0) result.lost.push(`${key} (${d.id}, ${d.status})`)
    if (got.length > 1) result.receivedMoreThanOnce++
    for (const r of got) {
      if (!event || r.body !== event.body || !endpoint || !r.verifiedWith.includes(endpoint.secret)) {
        result.mismatched.push(`${key}: body or signature differs from the stored event`)
      }
    }
    // The log: succeeded, attempts numbered 1..n, 503s (the receiver's first answer) then one 2xx.
    const statuses = logged.map((a) => a.response_status)
    const numbered = logged.every((a, i) => a.number === i + 1)
    const answers = statuses.every((s, i) => (i === statuses.length - 1 ? s === 204 : s === 503))
    if (
      d.status !== 'succeeded' ||
      d.attempts !== logged.length ||
      !numbered ||
      !answers ||
      logged.length === 0
    ) {
      result.badLog.push(`${key}: ${d.status}, attempts ${d.attempts}, logged ${JSON.stringify(statuses)}`)
    }
    result.loggedRetries += Math.max(0, logged.length - 1)
    // Requests beyond the logged attempts were attempts whose outcome a kill kept from being written.
    const extra = got.length - logged.length
    const held = claims.get(d.id)?.size ?? 0
    if (extra < 0 || extra > held) {
      result.unexplained.push(
        `${key}: received ${got.length}, logged ${logged.length}, claims at kills ${held}`,
      )
    }
    if (extra > 0) {
      result.duplicates += extra
      result.duplicatedDeliveries++
      if (unansweredAtKills.has(key)) result.duplicatesUnanswered++
      else if (arrivedAfterAKill.has(key)) result.duplicatesArrivedAfter++
      else result.duplicatesAnsweredUnwritten++
    }
  }
  for (const key of receipts.keys()) if (!keys.has(key)) result.strangers.push(key)
  // What the receiver saw in flight at a kill, the database held as claimed by the dead process.
  for (const [i, kill] of kills.entries()) {
    const late = (arrivedAfterKills[i] ?? []).map(keyOfReceipt)
    for (const key of [...kill.unanswered, ...late]) {
      const id = keyOfDelivery.get(key)
      if (!id || !kill.claims.has(id)) result.inFlightNotClaimed.push(`kill ${kill.n}: ${key}`)
    }
  }
  return result
}

/** The delivery log as an admin reads it (GET /api/console/v1/webhook-deliveries): all succeeded. */
export async function expectDeliveryLogAllSucceeded(
  baseUrl: string,
  adminToken: string,
  total: number,
): Promise<void> {
  const get = async (query: string) => {
    const response = await fetch(`${baseUrl}/api/console/v1/webhook-deliveries?${query}`, {
      headers: { authorization: `Bearer ${adminToken}` },
    })
    expect(response.status, await response.clone().text()).toBe(200)
    return (await response.json()) as { data: { status: string }[]; nextCursor: string | null }
  }
  for (const status of ['pending', 'failed', 'exhausted']) {
    expect((await get(`status=${status}`)).data, `deliveries ${status}`).toEqual([])
  }
  let succeeded = 0
  let cursor: string | null = null
  do {
    const page: { data: { status: string }[]; nextCursor: string | null } = await get(
      `status=succeeded&limit=200${cursor ? `&cursor=${cursor}` : ''}`,
    )
    succeeded += page.data.filter((d) => d.status === 'succeeded').length
    cursor = page.nextCursor
  } while (cursor)
  expect(succeeded).toBe(total)
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
