import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import got, { type Got } from 'got'

/**
 * The one HTTP client of the agent: keep-alive sockets (one per request in flight, plus one for
 * tokens), a timeout on every request, no redirects, and no retries or thrown HTTP errors of its
 * own: the forwarder decides what to retry, and when (uplink/backoff.ts).
 */
export function createHttpClient(options: { url: string; timeoutSeconds: number; concurrency: number }): {
  http: Got
  close(): void
} {
  const agents = {
    http: new HttpAgent({ keepAlive: true, maxSockets: options.concurrency + 1 }),
    https: new HttpsAgent({ keepAlive: true, maxSockets: options.concurrency + 1 }),
  }
  const http = got.extend({
    prefixUrl: options.url.replace(/\/+$/, ''),
    timeout: { request: options.timeoutSeconds * 1000 },
    retry: { limit: 0 },
    throwHttpErrors: false,
    followRedirect: false,
    agent: agents,
    headers: { 'user-agent': 'hajri-agent' },
  })
  return {
    http,
    close() {
      agents.http.destroy()
      agents.https.destroy()
    },
  }
}
