/**
 * The verdict of the chaos tests: sent, acknowledged, stored, duplicated and lost punches, and
 * webhook deliveries lost and duplicated; none may be lost, and the punch log holds no duplicate. The punch
 * log and each delivery are judged as in the device-to-webhook tests (judge-punch-webhooks.ts), with one
 * difference: webhooks are at least once (docs/decisions/0020-webhook-outbox.md), so a delivery received more
 * than once is counted, not failed, as long as every copy carries the webhook-id of the first (one webhook-id
 * per punch), the same body, and verifies. A run lasts minutes, longer than the 5 minutes standardwebhooks
 * allows between a webhook's timestamp and its check, so each delivery is verified as of when it arrived, as
 * a receiver does.
 */
import { expect } from 'vitest'
import type { Punch } from '../../../shared/punch.js'
import type { ReceivedWebhook } from '../../support/webhook-receiver.js'
import {
  judgePunchWebhooks,
  type PunchWebhookVerdict,
  type SentPunch,
  tamper,
  verifies,
} from './judge-punch-webhooks.js'

export interface ChaosVerdict {
  punches: {
    /** Made by the devices: MQTT publishes, serial lines written. */
    sent: number
    /** PUBACKed, or written on the serial line and spooled. */
    acknowledged: number
    /** In the cloud's punch log (read through the public API). */
    stored: number
    /** Log entries beyond the first for one punch (by externalId, or by id). */
    duplicated: number
    /** Acknowledged and not in the log. */
    lost: number
  }
  webhooks: {
    /** One per stored punch. */
    expected: number
    /** Requests the receiver got. */
    received: number
    /** Distinct webhook-ids among them. */
    distinct: number
    /** Stored punches no webhook told of. */
    lost: number
    /** Requests beyond the first of a webhook-id (allowed: at least once). */
    duplicated: number
    /** Requests whose signature verified with the endpoint's secret when they arrived. */
    verified: number
  }
  /** Every finding, by what is wrong (each must be empty). */
  problems: Record<string, string[]>
  base: PunchWebhookVerdict
}

export function judgeChaos(input: {
  sentCount: number
  acknowledged: readonly SentPunch[]
  stored: readonly Punch[]
  received: readonly ReceivedWebhook[]
  secret: string
  eventType: string
}): ChaosVerdict {
  const base = judgePunchWebhooks({
    sent: input.acknowledged,
    stored: input.stored,
    received: input.received,
    secret: input.secret,
    eventType: input.eventType,
  })
  // One webhook-id per punch, one body per webhook-id: a repeat is the same delivery sent again.
  const idsByPunch = new Map<string, Set<string>>()
  const bodyById = new Map<string, string>()
  const changedBodies: string[] = []
  for (const r of input.received) {
    const webhookId = String(r.headers['webhook-id'])
    const first = bodyById.get(webhookId)
    if (first === undefined) bodyById.set(webhookId, r.body)
    else if (first !== r.body)
      changedBodies.push(`${webhookId}: ${first.slice(0, 120)} then ${r.body.slice(0, 120)}`)
    const punchId = r.json?.data?.id
    if (typeof punchId !== 'string') continue
    const ids = idsByPunch.get(punchId) ?? new Set<string>()
    ids.add(webhookId)
    idsByPunch.set(punchId, ids)
  }
  const severalIds = [...idsByPunch]
    .filter(([, ids]) => ids.size > 1)
    .map(([punchId, ids]) => `${punchId}: ${[...ids].join(', ')}`)
  // Verified as of its arrival (and must fail with its body altered, so the check can fail).
  const unverified: string[] = []
  const tamperAccepted: string[] = []
  for (const r of input.received) {
    const webhookId = String(r.headers['webhook-id'])
    if (!verifiesAt(r.at, input.secret, r.body, r.headers)) unverified.push(webhookId)
    const altered = tamper(r.body)
    if (altered === r.body || verifiesAt(r.at, input.secret, altered, r.headers))
      tamperAccepted.push(webhookId)
  }
  const distinct = bodyById.size
  const storedIds = new Set(input.stored.map((p) => p.externalId ?? p.id))
  return {
    punches: {
      sent: input.sentCount,
      acknowledged: input.acknowledged.length,
      stored: input.stored.length,
      duplicated: input.stored.length - storedIds.size,
      lost: base.missing.length,
    },
    webhooks: {
      expected: input.stored.length,
      received: input.received.length,
      distinct,
      lost: base.untold.length,
      duplicated: input.received.length - distinct,
      verified: input.received.length - unverified.length,
    },
    problems: {
      'acknowledged punches not in the punch log (lost)': base.missing,
      'punches in the punch log more than once': base.duplicated,
      'punches stored otherwise than sent': base.altered,
      'stored punches never sent': base.strangers,
      'stored punches no webhook told of (lost)': base.untold,
      'webhooks that failed standardwebhooks verification': unverified,
      'webhooks that verified with an altered body': tamperAccepted,
      'webhooks not a {type, timestamp, data} punch event': base.malformed,
      'webhooks whose data is not the stored punch': base.mismatched,
      'punches told of under more than one webhook-id': severalIds,
      'webhook-ids received with different bodies': changedBodies,
    },
    base,
  }
}

/** The counts of the chaos table in docs/development/figures.md, flattened for printTable. */
export function chaosRows(verdict: ChaosVerdict): Record<string, number> {
  const { punches, webhooks } = verdict
  return {
    'punches sent': punches.sent,
    'punches acknowledged (PUBACKed / written)': punches.acknowledged,
    'punches stored (punch log, public API)': punches.stored,
    'punches duplicated in the punch log': punches.duplicated,
    'punches lost (acknowledged, not stored)': punches.lost,
    'webhooks expected (one per stored punch)': webhooks.expected,
    'webhooks received': webhooks.received,
    'webhooks verified (standardwebhooks)': webhooks.verified,
    'webhooks lost': webhooks.lost,
    'webhooks duplicated (same webhook-id, allowed)': webhooks.duplicated,
  }
}

/** standardwebhooks' verify, with the clock it reads set to the moment the request arrived. */
function verifiesAt(
  atMs: number,
  secret: string,
  body: string,
  headers: ReceivedWebhook['headers'],
): boolean {
  const realNow = Date.now
  Date.now = () => atMs
  try {
    return verifies(secret, body, headers)
  } finally {
    Date.now = realNow
  }
}

export function expectNothingLost(verdict: ChaosVerdict): void {
  for (const [what, found] of Object.entries(verdict.problems))
    expect(found.slice(0, 10), `${found.length} ${what}`).toEqual([])
  expect(verdict.punches.lost).toBe(0)
  expect(verdict.punches.duplicated).toBe(0)
  expect(verdict.webhooks.lost).toBe(0)
  // Every punch made was acknowledged in the end (the devices were waited for), and stored once.
  expect(verdict.punches.acknowledged).toBe(verdict.punches.sent)
  expect(verdict.punches.stored).toBe(verdict.punches.acknowledged)
  expect(verdict.webhooks.verified).toBe(verdict.webhooks.received)
  expect(verdict.punches.sent).toBeGreaterThan(0)
}
