import http from 'node:http'

export interface HttpAnswer {
  status: number
  body: string
}

/** One request over `agent` (keep-alive: no handshake in what is timed); resolves once its body has been read. */
export function request(
  agent: http.Agent,
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('error', reject)
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      )
    })
    req.on('error', reject)
    req.end(body)
  })
}

/** A request that must answer `status`; its JSON body otherwise an error naming what it was. */
export async function expectJson<T>(
  answer: Promise<HttpAnswer>,
  status: number,
  what: string,
): Promise<T | undefined> {
  const { status: got, body } = await answer
  if (got !== status) throw new Error(`${what} answered ${got}, not ${status}: ${body.slice(0, 300)}`)
  return body === '' ? undefined : (JSON.parse(body) as T)
}
