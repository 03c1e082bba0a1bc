import type { Got, Response } from 'got'
import type { PunchBatchInput, PunchInput } from '../../shared/punch.js'
import type { SpooledPunch } from '../punch/spooled-punch.js'
import { serverHintMs } from './backoff.js'
import { cloudAnswers } from './health-probe.js'
import { readPunchBatchAnswer } from './punch-batch-answer.js'
import { RetryableError } from './retryable-error.js'
import { parseJson, type TokenClient } from './token-client.js'

/** What the cloud made of one punch: stored (now or before), or refused for good with its problem. */
export type PunchOutcome =
  | { punch: SpooledPunch; accepted: true }
  | { punch: SpooledPunch; accepted: false; problem: Record<string, unknown> }

const PUNCHES = 'api/public/v1/attendance/punches'

/** The body the cloud takes for a punch. */
function toInput(punch: SpooledPunch): PunchInput {
  return {
    employeeCode: punch.employeeCode,
    punchType: punch.punchType,
    punchedAt: punch.punchedAt,
    deviceId: punch.deviceId,
    source: 'hajri-agent',
    externalId: punch.id,
  }
}

/** A problem body, or a stand-in naming the status when the body is not one. */
function problemOf(response: Response<string>): Record<string, unknown> {
  return parseJson(response.body) ?? { status: response.statusCode, title: `HTTP ${response.statusCode}` }
}

/** A refusal that retrying will never change: the punch itself is at fault (400, 422). */
function isFinal(status: number): boolean {
  return status === 400 || status === 422
}

/**
 * Sends punches to the cloud (docs/decisions/0025-punch-id.md): one on the single endpoint with its id as the
 * Idempotency-Key, more on the batch endpoint. Every punch carries its id as `externalId`, the
 * cloud's permanent dedupe key, so a retry after a lost answer stores nothing twice. A batch gets no
 * Idempotency-Key: the cloud would replay its first answer for a day, and a punch refused then (an
 * employee not yet added) would be refused again when a device re-sends its log (found by tests).
 * Returns an outcome per punch, or throws RetryableError for anything worth trying again later
 * (the network, 429, 5xx, credentials the operator must fix).
 */
export class PunchUplink {
  constructor(private readonly deps: { http: Got; tokens: TokenClient }) {}

  /** Whether the cloud answers its /healthz now (uplink/health-probe.ts): no token, no body. */
  answers(signal: AbortSignal): Promise<boolean> {
    return cloudAnswers(this.deps.http, signal)
  }

  /** `signal` abandons the request (on stop): the punches stay in the spool and go again later. */
  async send(punches: readonly SpooledPunch[], signal?: AbortSignal): Promise<PunchOutcome[]> {
    const single = punches.length === 1 ? punches[0] : undefined
    const response = single
      ? await this.post(PUNCHES, toInput(single), single.id, signal)
      : await this.post(`${PUNCHES}/batch`, batchOf(punches), undefined, signal)
    if (single) {
      if (response.statusCode === 201) return [{ punch: single, accepted: true }]
      if (isFinal(response.statusCode))
        return [{ punch: single, accepted: false, problem: problemOf(response) }]
    } else if (response.statusCode === 200) {
      return this.batchOutcomes(punches, response)
    } else if (response.statusCode === 400) {
      // The batch as a whole was refused, so no punch can be blamed: send each alone to find out.
      const outcomes: PunchOutcome[] = []
      for (const punch of punches) outcomes.push(...(await this.send([punch], signal)))
      return outcomes
    }
    throw retryable(response)
  }

  /**
   * An answer that is not the cloud's batch answer (a proxy's page, a cut-off body) settles nothing:
   * it throws RetryableError, so the chunk stays in the spool and is sent again.
   */
  private batchOutcomes(punches: readonly SpooledPunch[], response: Response<string>): PunchOutcome[] {
    const read = readPunchBatchAnswer(parseJson(response.body))
    if (!read.answer) throw new RetryableError(`the batch answer is malformed: ${read.why}`)
    const byIndex = new Map(read.answer.results.map((r) => [r.index, r]))
    return punches.map((punch, index): PunchOutcome => {
      const result = byIndex.get(index)
      if (result?.status === 'created' || result?.status === 'duplicate') return { punch, accepted: true }
      if (result?.status === 'rejected' && result.problem && isFinal(result.problem.status))
        return { punch, accepted: false, problem: result.problem }
      throw new RetryableError(`the batch answer has no usable result for punch ${index}`)
    })
  }

  /** POSTs with the current token; a 401 gets one fresh token and one more try. */
  private async post(
    path: string,
    json: PunchInput | PunchBatchInput,
    idempotencyKey: string | undefined,
    signal?: AbortSignal,
  ): Promise<Response<string>> {
    for (let attempt = 0; ; attempt++) {
      const token = await this.deps.tokens.token(signal)
      let response: Response<string>
      try {
        response = await this.deps.http.post(path, {
          json,
          headers: {
            authorization: `Bearer ${token}`,
            ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
          },
          ...(signal ? { signal } : {}),
        })
      } catch (err) {
        if (signal?.aborted) throw new RetryableError('stopping')
        throw new RetryableError(
          `the cloud did not answer: ${(err as Error).message}`,
          undefined,
          'unreachable',
        )
      }
      if (response.statusCode !== 401 || attempt > 0) return response
      this.deps.tokens.invalidate(token)
    }
  }
}

function batchOf(punches: readonly SpooledPunch[]): PunchBatchInput {
  return { punches: punches.map(toInput) }
}

function retryable(response: Response<string>): RetryableError {
  const problem = parseJson(response.body)
  const what =
    typeof problem?.code === 'string'
      ? `${problem.code}: ${String(problem.detail ?? problem.title ?? '')}`
      : ''
  const headers = response.headers as Record<string, string | undefined>
  const hintMs = serverHintMs(
    response.statusCode === 429 ? headers : { 'retry-after': headers['retry-after'] },
  )
  // A 429 or a Retry-After asks us to wait: only a 5xx without one may be cut short by the probe.
  const asked = response.statusCode === 429 || headers['retry-after'] !== undefined
  return new RetryableError(
    `the cloud answered ${response.statusCode}${what ? ` (${what})` : ''}`,
    // RateLimit-Reset says when the quota starts again: a reason to wait only once it has run out
    // (429). The cloud sends it on every answer after its rate-limit hook, a 500 included, where
    // waiting for it stalled forwarding for up to a minute after a database restart (found
    // by the chaos test). Retry-After is the server asking, whatever the status.
    hintMs,
    !asked && response.statusCode >= 500 ? 'failing' : 'other',
  )
}
