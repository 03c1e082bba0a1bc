import http from 'node:http'
import { Webhook } from 'standardwebhooks'
import { WebhookUrlPolicy } from '../../cloud/features/webhooks/url-policy.js'
import { WebhookSender } from '../../cloud/features/webhooks/webhook-sender.js'
import { request } from './webhook-http.js'

export interface SignedPostsResult {
  sent: number
  /** Answers other than 2xx, and requests that failed outright. */
  failures: number
  firstFailure: string | undefined
}

/**
 * How the POSTs are made: `node-http`, a plain keep-alive node:http client signing with the
 * standardwebhooks package (what the network and the receiver allow); or `webhook-sender`, the
 * dispatcher's own WebhookSender (got, the SSRF-filtering agent, its signing), with no database,
 * claims or queue around it.
 */
export type SignedPostClient = 'node-http' | 'webhook-sender'

interface Lane {
  url: string
  secret: string
  signer: Webhook
  next: number
  inFlight: number
}

/**
 * Baselines of webhook-delivery: the same event bodies POSTed to each endpoint's URL with the
 * headers the dispatcher sends (Standard Webhooks v1: webhook-id, webhook-timestamp,
 * webhook-signature), under the dispatcher's limits: at most `concurrency` in flight, at most
 * `endpointConcurrency` to one endpoint, events oldest first.
 */
export async function postSignedWebhooks(options: {
  client: SignedPostClient
  receiverUrl: string
  endpoints: readonly { path: string; secret: string }[]
  events: readonly { id: string; body: string }[]
  concurrency: number
  endpointConcurrency: number
}): Promise<SignedPostsResult> {
  const { events, endpointConcurrency } = options
  const workers = Math.min(options.concurrency, options.endpoints.length * endpointConcurrency)
  const agent = new http.Agent({ keepAlive: true, maxSockets: workers })
  const policy = new WebhookUrlPolicy(['127.0.0.1'])
  const sender = new WebhookSender({ policy, timeoutSeconds: 15 })
  const lanes: Lane[] = options.endpoints.map((e) => ({
    url: `${options.receiverUrl}${e.path}`,
    secret: e.secret,
    signer: new Webhook(e.secret),
    next: 0,
    inFlight: 0,
  }))
  const result: SignedPostsResult = { sent: 0, failures: 0, firstFailure: undefined }

  /** One POST; its status, or the error it failed with. */
  const post = async (lane: Lane, event: { id: string; body: string }): Promise<string | undefined> => {
    if (options.client === 'webhook-sender') {
      const answer = await sender.send(lane.url, event.id, event.body, [lane.secret])
      const ok = answer.status !== null && answer.status >= 200 && answer.status <= 299
      return ok ? undefined : `${answer.status ?? answer.error} ${answer.body?.slice(0, 200) ?? ''}`
    }
    const at = new Date()
    const answer = await request(
      agent,
      'POST',
      lane.url,
      {
        'content-type': 'application/json',
        'user-agent': 'hajri-bench/1',
        'webhook-id': event.id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': lane.signer.sign(event.id, at, event.body),
      },
      event.body,
    )
    return answer.status >= 200 && answer.status <= 299
      ? undefined
      : `${answer.status} ${answer.body.slice(0, 200)}`
  }

  /** The lane whose next event is oldest among those with room, as the dispatcher claims. */
  const pick = (): Lane | undefined => {
    let best: Lane | undefined
    for (const lane of lanes) {
      if (lane.next >= events.length || lane.inFlight >= endpointConcurrency) continue
      if (!best || lane.next < best.next) best = lane
    }
    return best
  }

  // A worker that finds no lane with room stops; that happens only once every event is taken, since
  // the worker looking has nothing in flight and there are no more workers than slots.
  const worker = async () => {
    for (let lane = pick(); lane; lane = pick()) {
      const event = events[lane.next++] as { id: string; body: string }
      lane.inFlight++
      try {
        const failure = await post(lane, event)
        result.sent++
        if (failure !== undefined) {
          result.failures++
          result.firstFailure ??= failure
        }
      } catch (err) {
        result.failures++
        result.firstFailure ??= String(err)
      } finally {
        lane.inFlight--
      }
    }
  }
  try {
    await Promise.all(Array.from({ length: workers }, worker))
  } finally {
    agent.destroy()
    policy.close()
  }
  return result
}
