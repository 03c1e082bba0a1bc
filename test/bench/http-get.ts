import http from 'node:http'

export interface TimedResponse {
  status: number
  body: string
  /** From sending the request to the last byte of the body. */
  ms: number
}

/** One GET over `agent` (keep-alive, so a page's latency holds no TCP handshake), timed. */
export function httpGet(
  agent: http.Agent,
  url: string,
  headers: Record<string, string>,
): Promise<TimedResponse> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const request = http.get(url, { agent, headers }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('error', reject)
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          ms: Number(process.hrtime.bigint() - started) / 1e6,
        }),
      )
    })
    request.on('error', reject)
  })
}
