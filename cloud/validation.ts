import type { TSchema } from '@sinclair/typebox'
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import formatsPlugin from 'ajv-formats'
import type { FieldError } from '../shared/problem.js'
import { parseTimestamp } from '../shared/time.js'

type FieldLocation = FieldError['in']

// ajv-formats is CommonJS with an ES default: under NodeNext its default import is the module.
const addFormats = formatsPlugin as unknown as typeof formatsPlugin.default

function createAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({
    // Report every wrong field at once. Bodies are bounded (bodyLimit, maxItems), so this stays cheap.
    allErrors: true,
    // Unknown properties are refused, never silently dropped (additionalProperties: false).
    removeAdditional: false,
    useDefaults: true,
    coerceTypes,
    strict: false,
  })
  addFormats(ajv)
  // RFC 3339 with a required offset, in the years we can store (shared/time.ts).
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => parseTimestamp(s) !== undefined })
  return ajv
}

// Bodies are JSON and must carry real types; query strings and path parameters are text, so their
// numbers are coerced ("limit=50" → 50).
const bodyAjv = createAjv(false)
const textAjv = createAjv('array')

/** Fastify validator compiler: strict JSON bodies, coercing query strings and paths. */
export function validatorCompiler({
  schema,
  httpPart,
}: {
  schema: object
  httpPart?: string
}): ValidateFunction {
  return (httpPart === 'body' ? bodyAjv : textAjv).compile(schema)
}

const PART_LOCATION: Record<string, FieldLocation> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'header',
}

export function fieldLocation(validationContext: string | undefined): FieldLocation {
  return PART_LOCATION[validationContext ?? 'body'] ?? 'body'
}

function describe(error: ErrorObject): { pointer: string; message: string } {
  const params = error.params as Record<string, unknown>
  if (error.keyword === 'required') {
    return { pointer: `${error.instancePath}/${String(params.missingProperty)}`, message: 'is required' }
  }
  if (error.keyword === 'additionalProperties') {
    return {
      pointer: `${error.instancePath}/${String(params.additionalProperty)}`,
      message: 'is not a known field',
    }
  }
  if (error.keyword === 'enum') {
    const allowed = (params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')
    return { pointer: error.instancePath, message: `must be one of ${allowed}` }
  }
  if (error.keyword === 'minLength') {
    const limit = Number(params.limit)
    return {
      pointer: error.instancePath,
      message: limit === 1 ? 'must not be empty' : `must be at least ${limit} characters`,
    }
  }
  if (error.keyword === 'maxLength') {
    return { pointer: error.instancePath, message: `must be at most ${String(params.limit)} characters` }
  }
  if (error.keyword === 'format' && params.format === 'date-time') {
    return {
      pointer: error.instancePath,
      message: 'must be an RFC 3339 date-time with an offset, e.g. 2026-11-21T09:00:00+05:30',
    }
  }
  return { pointer: error.instancePath, message: error.message ?? 'is not valid' }
}

/**
 * Turns ajv errors into problem `errors` entries: JSON pointers as URI fragments (RFC 9457 §3),
 * `prefix` locating a nested document (a batch item is `/punches/3`). One entry per field.
 */
export function toFieldErrors(
  errors: readonly ErrorObject[],
  location: FieldLocation,
  prefix = '',
): FieldError[] {
  const seen = new Set<string>()
  const out: FieldError[] = []
  for (const error of errors) {
    // An anyOf/oneOf failure repeats what its branches already said.
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue
    const { pointer, message } = describe(error)
    const full = `#${prefix}${pointer}`
    const key = `${full} ${message}`
    if (seen.has(key)) continue
    seen.add(key)
    out.push({ in: location, pointer: full, message })
  }
  return out
}

type CheckResult<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] }

/** A validator for one schema, for input that does not come through a route (batch items, CSV rows). */
export function compileCheck<T>(schema: TSchema): (value: unknown, prefix?: string) => CheckResult<T> {
  const validate = bodyAjv.compile(schema)
  return (value, prefix = '') =>
    validate(value)
      ? { ok: true, value: value as T }
      : { ok: false, errors: toFieldErrors(validate.errors ?? [], 'body', prefix) }
}
