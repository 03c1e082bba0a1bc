import { Webhook } from 'standardwebhooks'
import { type ReceivedWebhook, WebhookReceiver } from '../../support/webhook-receiver.js'
import type { ServerMessage } from '../server-process.js'

/**
 * The receiver of the webhook-delivery benchmark, in a process of its own so that neither sender
 * (the cloud's dispatcher, or the baseline's plain HTTP client in the parent) shares its event loop.
 * test/support's WebhookReceiver answering 204 at once, with no signature checked on the way (that is
 * done after a run, off the clock). A request's group is its first two path segments (`/hook/one`);
 * the parent reads per-group counts and arrival times, and checks a run, over a control path:
 *
 * - GET  /_bench/stats?group=/hook/one → {count, firstAt, lastAt} (Date.now() ms of arrivals)
 * - POST /_bench/check {group, secrets: {path: secret}} → signatures verified, duplicates, order
 * - POST /_bench/clear → forgets every request so far (a round's requests are kept until then)
 */
const tell = (message: ServerMessage) => process.send?.(message)

interface GroupStats {
  count: number
  firstAt: number
  lastAt: number
}

const CONTROL = '/_bench/'

function groupOf(path: string): string {
  return path.split('/').slice(0, 3).join('/')
}

/** `bench-<tag>-<n>`: the punch generator's sequence number, to see in what order events came. */
function sequenceOf(received: ReceivedWebhook): number | undefined {
  const externalId = received.json?.data.externalId
  if (typeof externalId !== 'string') return undefined
  const n = Number(externalId.slice(externalId.lastIndexOf('-') + 1))
  return Number.isInteger(n) ? n : undefined
}

function check(receiver: WebhookReceiver, group: string, secrets: Record<string, string>) {
  const requests = receiver.received.filter((r) => groupOf(r.path) === group)
  const ids = new Set<string>()
  const highest = new Map<string, number>()
  let verified = 0
  let duplicates = 0
  let outOfOrder = 0
  for (const r of requests) {
    const secret = secrets[r.path]
    try {
      if (secret === undefined) throw new Error('no secret for this path')
      new Webhook(secret).verify(r.body, r.headers as Record<string, string>)
      verified++
    } catch {}
    const key = `${r.path} ${String(r.headers['webhook-id'])}`
    if (ids.has(key)) duplicates++
    ids.add(key)
    const n = sequenceOf(r)
    const before = highest.get(r.path) ?? -1
    if (n !== undefined && n < before) outOfOrder++
    if (n !== undefined && n > before) highest.set(r.path, n)
  }
  return { count: requests.length, verified, distinct: ids.size, duplicates, outOfOrder }
}

try {
  const receiver = await new WebhookReceiver().start()
  const groups = new Map<string, GroupStats>()
  receiver.respond((request) => {
    if (!request.path.startsWith(CONTROL)) {
      const group = groupOf(request.path)
      const stats = groups.get(group)
      if (stats) {
        stats.count++
        stats.lastAt = request.at
      } else groups.set(group, { count: 1, firstAt: request.at, lastAt: request.at })
      return { status: 204 }
    }
    const url = new URL(request.path, 'http://receiver')
    const json = (value: unknown) => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(value),
    })
    if (url.pathname === `${CONTROL}stats`) {
      return json(groups.get(url.searchParams.get('group') ?? '') ?? { count: 0, firstAt: 0, lastAt: 0 })
    }
    if (url.pathname === `${CONTROL}check`) {
      const { group, secrets } = JSON.parse(request.body) as {
        group: string
        secrets: Record<string, string>
      }
      return json(check(receiver, group, secrets))
    }
    if (url.pathname === `${CONTROL}clear`) {
      receiver.received.splice(0)
      groups.clear()
      return json({ cleared: true })
    }
    return { status: 404 }
  })
  const stop = () => {
    receiver.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    )
  }
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'stop') stop()
  })
  process.once('disconnect', stop)
  tell({ type: 'listening', url: `http://127.0.0.1:${receiver.port}` })
} catch (err) {
  tell({ type: 'failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) })
  process.exit(1)
}
