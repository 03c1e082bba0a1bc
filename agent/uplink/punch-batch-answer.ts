import { Ajv, type ValidateFunction } from 'ajv'
import { type PunchBatchResponse, PunchBatchResponseSchema } from '../../shared/punch.js'
import { parseTimestamp } from '../../shared/time.js'

let compiled: ValidateFunction<PunchBatchResponse> | undefined

function validator(): ValidateFunction<PunchBatchResponse> {
  if (compiled) return compiled
  const ajv = new Ajv({
    // A newer cloud may add fields to its answer: they are dropped, not a reason to refuse an answer
    // whose every field this agent reads is right (an agent on site is upgraded long after the cloud).
    removeAdditional: true,
    strict: false,
  })
  // The cloud's reading of RFC 3339 (shared/time.ts), offset required.
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => parseTimestamp(s) !== undefined })
  compiled = ajv.compile<PunchBatchResponse>(PunchBatchResponseSchema)
  return compiled
}

/**
 * The cloud's answer to a batch, checked against the schema the cloud answers with; otherwise why
 * not, e.g. `/results/0/status must be equal to one of the allowed values`.
 */
export function readPunchBatchAnswer(
  body: unknown,
): { answer: PunchBatchResponse } | { answer: undefined; why: string } {
  const validate = validator()
  if (validate(body)) return { answer: body }
  const first = validate.errors?.[0]
  return {
    answer: undefined,
    why: first ? `${first.instancePath || '/'} ${first.message ?? ''}`.trim() : '?',
  }
}
