import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_RETRY_SCHEDULE } from '../../../../cloud/settings/webhook-settings.js'
import { nowMicros, parseTimestamp } from '../../../../shared/time.js'
import type { WebhookDeliveryDetail } from '../../../../shared/webhooks.js'
import { describeEachDatabase } from '../../../support/cloud-harness.js'
import { WebhookReceiver } from '../../../support/webhook-receiver.js'
import { createEndpoint, newTenantConsole, sleep, waitForDelivery } from './webhook-kit.js'

// Retries (docs/decisions/0021-webhook-retries.md): immediately, then per the schedule, ±10 % jitter;
// Retry-After honoured; after the last attempt the delivery is exhausted.

const SECOND = 1_000_000
const JITTER = 0.1

const receiver = new WebhookReceiver()
beforeAll(() => receiver.start())
afterAll(() => receiver.stop())

const micros = (time: string | null) => {
  const us = time === null ? undefined : parseTimestamp(time)
  if (us === undefined) throw new Error(`not a time: ${time}`)
  return us
}

/** The gap the delivery was given before its next attempt, in µs. */
const scheduledGap = (d: WebhookDeliveryDetail) => micros(d.nextAttemptAt) - micros(d.lastAttemptAt)

/** The gaps between consecutive values, in order. */
const gaps = (times: number[]) => times.slice(1).map((t, i) => t - (times[i] as number))

// Each test has its own tenant, receiver path and (where it moves the clock) cloud: every suite and
// test of this file runs at once, on both databases.
describe.concurrent('webhook retries', () => {
  describeEachDatabase(
    'webhook retries on a compressed schedule (0, 1, 2 s)',
    (cloud) => {
      it.concurrent('attempts at once, then after 1 s and 2 s (within jitter), then marks the delivery exhausted', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/always-fails-${cloud.kind}`
        const { id } = await createEndpoint(api, { url: receiver.url(path) })
        receiver.respondAt(path, { status: 500 })
        expect((await api.post(`/webhooks/${id}/test`)).statusCode).toBe(202)

        const delivery = await waitForDelivery(api, id, (d) => d.status === 'exhausted')
        expect(delivery.attempts).toBe(3)
        expect(delivery.nextAttemptAt).toBeNull()
        expect(delivery.attemptLog.map((a) => [a.number, a.trigger, a.responseStatus])).toEqual([
          [1, 'automatic', 500],
          [2, 'automatic', 500],
          [3, 'automatic', 500],
        ])
        expect(receiver.to(path)).toHaveLength(3)
        // The schedule's lower bounds (step − 10 % jitter): never earlier; later is the poll's latitude.
        const [first, second] = gaps(receiver.to(path).map((r) => r.at))
        expect(first).toBeGreaterThanOrEqual(900)
        expect(second).toBeGreaterThanOrEqual(1800)
        const [loggedFirst, loggedSecond] = gaps(delivery.attemptLog.map((a) => micros(a.at)))
        expect(loggedFirst).toBeGreaterThanOrEqual(0.9 * SECOND)
        expect(loggedSecond).toBeGreaterThanOrEqual(1.8 * SECOND)
      })

      it.concurrent('waits as long as a 503 Retry-After (seconds) says, though the schedule says sooner', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/retry-after-${cloud.kind}`
        const { id } = await createEndpoint(api, { url: receiver.url(path) })
        receiver.respondAt(path, (_request, index) =>
          index === 0 ? { status: 503, headers: { 'retry-after': '2' } } : { status: 204 },
        )
        expect((await api.post(`/webhooks/${id}/test`)).statusCode).toBe(202)

        const delivery = await waitForDelivery(api, id, (d) => d.status === 'succeeded')
        expect(delivery.attemptLog.map((a) => a.responseStatus)).toEqual([503, 204])
        // The schedule alone would retry after 0.9 to 1.1 s.
        const [gap] = gaps(receiver.to(path).map((r) => r.at))
        expect(gap).toBeGreaterThanOrEqual(1950)
      })

      it.concurrent('honours a 429 Retry-After given as seconds or as an HTTP date, over the schedule', async () => {
        const api = await newTenantConsole(cloud)
        const cases = [
          { path: `/retry-after-seconds-${cloud.kind}`, header: '7200', atLeast: 7200 * SECOND },
          {
            path: `/retry-after-date-${cloud.kind}`,
            header: new Date(Date.now() + 3 * 3600_000).toUTCString(),
            // The date has whole seconds, and some time passes before the answer is read.
            atLeast: (3 * 3600 - 60) * SECOND,
          },
        ]
        for (const { path, header, atLeast } of cases) {
          receiver.respondAt(path, { status: 429, headers: { 'retry-after': header } })
          const { id } = await createEndpoint(api, { url: receiver.url(path) })
          expect((await api.post(`/webhooks/${id}/test`)).statusCode).toBe(202)
          const failed = await waitForDelivery(api, id, (d) => d.attempts === 1)
          expect(failed.status).toBe('failed')
          expect(failed.attemptLog[0]?.responseStatus).toBe(429)
          // The schedule's next step is 1 s; the receiver asked for far longer.
          expect(scheduledGap(failed)).toBeGreaterThanOrEqual(atLeast)
        }
      })

      it.concurrent('holds a delivery at most a day, whatever Retry-After a receiver asks', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/retry-after-years-${cloud.kind}`
        receiver.respondAt(path, { status: 503, headers: { 'retry-after': String(10 * 365 * 86_400) } })
        const { id } = await createEndpoint(api, { url: receiver.url(path) })
        expect((await api.post(`/webhooks/${id}/test`)).statusCode).toBe(202)
        const failed = await waitForDelivery(api, id, (d) => d.attempts === 1)
        expect(failed.status).toBe('failed')
        expect(scheduledGap(failed)).toBe(86_400 * SECOND)
      })
    },
    { webhooks: { retrySchedule: [0, 1, 2], allowlist: ['127.0.0.1'] } },
  )

  describeEachDatabase(
    'webhook retries on the default schedule, in the app clock',
    (cloud) => {
      afterEach(() => {
        cloud.fixedNow = undefined
      })

      it('follows 0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h with ±10 % jitter, and no attempt before its time', async () => {
        const api = await newTenantConsole(cloud)
        const path = `/default-schedule-${cloud.kind}`
        const { id } = await createEndpoint(api, { url: receiver.url(path) })
        receiver.respondAt(path, { status: 500 })
        // The dispatcher reads the same clock: it moves only when the test moves it.
        cloud.fixedNow = nowMicros()
        expect((await api.post(`/webhooks/${id}/test`)).statusCode).toBe(202)

        const steps = DEFAULT_RETRY_SCHEDULE.length
        for (let made = 1; made < steps; made++) {
          const failed = await waitForDelivery(api, id, (d) => d.attempts === made)
          expect(failed.status).toBe('failed')
          const step = (DEFAULT_RETRY_SCHEDULE[made] as number) * SECOND
          const gap = scheduledGap(failed)
          expect(gap).toBeGreaterThanOrEqual(Math.floor(step * (1 - JITTER)))
          expect(gap).toBeLessThanOrEqual(Math.ceil(step * (1 + JITTER)))
          const next = micros(failed.nextAttemptAt)
          if (made === 2) {
            // Just before its time nothing is sent, over several of the dispatcher's polls.
            cloud.fixedNow = next - 1
            await sleep(800)
            expect(receiver.to(path)).toHaveLength(made)
          }
          cloud.fixedNow = next
          await receiver.waitFor(() => receiver.to(path).length === made + 1)
        }
        const exhausted = await waitForDelivery(api, id, (d) => d.status === 'exhausted')
        expect(exhausted.attempts).toBe(steps)
        expect(exhausted.nextAttemptAt).toBeNull()
        expect(receiver.to(path)).toHaveLength(steps)
        expect(new Set(receiver.to(path).map((r) => r.headers['webhook-id'])).size).toBe(1)
      })
    },
    { webhooks: { allowlist: ['127.0.0.1'] } },
  )
})
