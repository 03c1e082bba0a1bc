import { createHash } from 'node:crypto'
import http from 'node:http'
import type { SpooledPunch } from '../../agent/punch/spooled-punch.js'

const PUNCHES = '/api/public/v1/attendance/punches/batch'

/** POSTs over keep-alive `agent`; resolves with the status and body. */
function post(
  agent: http.Agent,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', agent, headers }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('error', reject)
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      )
    })
    request.on('error', reject)
    request.end(body)
  })
}

/** An access token by client credentials (RFC 6749 §4.4), as the agent's TokenClient gets one. */
export async function clientCredentialsToken(
  cloudUrl: string,
  clientId: string,
  clientSecret: string,
): Promise<string> {
  const agent = new http.Agent({ keepAlive: false })
  // RFC 6749 §2.3.1: each half form-encoded before Basic, as the agent's TokenClient does.
  const form = (value: string) => new URLSearchParams({ v: value }).toString().slice(2)
  const basic = Buffer.from(`${form(clientId)}:${form(clientSecret)}`).toString('base64')
  const response = await post(
    agent,
    `${cloudUrl}/api/oauth/token`,
    { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    new URLSearchParams({ grant_type: 'client_credentials', scope: 'attendance:write' }).toString(),
  )
  agent.destroy()
  const token = (JSON.parse(response.body) as { access_token?: unknown }).access_token
  if (response.status !== 200 || typeof token !== 'string')
    throw new Error(`token request answered ${response.status}: ${response.body.slice(0, 300)}`)
  return token
}

export interface DirectBatchResult {
  requests: number
  created: number
  duplicate: number
  rejected: number
  /** Responses other than 200, and requests that failed outright. */
  failures: number
  firstFailure: string | undefined
  seconds: number
}

const SUMMARY = /"created":(\d+),"duplicate":(\d+),"rejected":(\d+)/

/**
 * The drain baseline: the same punches straight into the batch endpoint, with the requests the
 * agent's PunchUplink makes (same body fields, source, externalId, the same Idempotency-Key
 * derivation, a bearer token) and as many in flight as the agent's cloud.concurrency. What the
 * agent costs beyond it is reading chunk files, deleting them durably and its own scheduling.
 */
export async function postDirectBatches(options: {
  cloudUrl: string
  token: string
  count: number
  batchSize: number
  concurrency: number
  punch: (i: number) => SpooledPunch
}): Promise<DirectBatchResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency })
  const result: DirectBatchResult = {
    requests: 0,
    created: 0,
    duplicate: 0,
    rejected: 0,
    failures: 0,
    firstFailure: undefined,
    seconds: 0,
  }
  let next = 0
  const worker = async () => {
    while (next < options.count) {
      const first = next
      next = Math.min(options.count, next + options.batchSize)
      const punches = Array.from({ length: next - first }, (_, k) => options.punch(first + k))
      const key = `batch-${createHash('sha256')
        .update(punches.map((p) => p.id).join(','))
        .digest('base64url')
        .slice(0, 40)}`
      const body = JSON.stringify({
        punches: punches.map((p) => ({
          employeeCode: p.employeeCode,
          punchType: p.punchType,
          punchedAt: p.punchedAt,
          deviceId: p.deviceId,
          source: 'hajri-agent',
          externalId: p.id,
        })),
      })
      result.requests++
      try {
        const response = await post(
          agent,
          `${options.cloudUrl}${PUNCHES}`,
          {
            authorization: `Bearer ${options.token}`,
            'idempotency-key': key,
            'content-type': 'application/json',
          },
          body,
        )
        const m = response.status === 200 ? SUMMARY.exec(response.body.slice(0, 200)) : null
        if (!m) {
          result.failures++
          result.firstFailure ??= `${response.status} ${response.body.slice(0, 300)}`
          continue
        }
        result.created += Number(m[1])
        result.duplicate += Number(m[2])
        result.rejected += Number(m[3])
      } catch (err) {
        result.failures++
        result.firstFailure ??= (err as Error).message
      }
    }
  }
  const started = performance.now()
  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker))
  } finally {
    agent.destroy()
  }
  result.seconds = (performance.now() - started) / 1000
  return result
}
