import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Registry } from 'prom-client'

export interface MetricsListener {
  url: string
  close(): Promise<void>
}

/**
 * The listener of GET /metrics: a plain node:http server apart from the API's, so that what
 * Prometheus reads is never on the public port, whatever a proxy in front of it forwards
 * (docs/decisions/0089-cloud-metrics-listener.md). It answers GET and HEAD /metrics and 404 to
 * anything else, reads no request body, and holds no credentials: the address it binds (loopback
 * by default) is its only protection.
 */
export async function startMetricsListener(
  registry: Registry,
  host: string,
  port: number,
): Promise<MetricsListener> {
  const server = createServer((request, response) => {
    const path = request.url?.split('?')[0]
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found\n')
      return
    }
    registry.metrics().then(
      (text) => {
        response.writeHead(200, { 'content-type': registry.contentType })
        response.end(request.method === 'HEAD' ? undefined : text)
      },
      () => response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('Metrics failed\n'),
    )
  })
  // A scrape takes milliseconds: a connection that sends nothing is not Prometheus.
  server.headersTimeout = 10_000
  server.requestTimeout = 10_000
  server.listen(port, host)
  await once(server, 'listening')
  const { address, port: bound } = server.address() as AddressInfo
  const shown = address.includes(':') ? `[${address}]` : address
  return {
    url: `http://${shown}:${bound}/metrics`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((err) => (err ? reject(err) : resolve()))
      }),
  }
}
