import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import { parseTimestamp } from '../../shared/time.js'
import type { PathSegment } from './config-file-error.js'
import type { ProblemList } from './problem-list.js'
import { AgentConfigSchema } from './schema.js'

/**
 * Checks a configuration document against AgentConfigSchema (docs/decisions/0023-agent-yaml-configuration.md)
 * and reports every wrong field at once, each at its path, in words for the IT staff who wrote the file. The
 * cloud does the same for request bodies (cloud/validation.ts); the agent keeps its own copy because its
 * readers are people editing YAML, not API clients, and agent/ does not import cloud/.
 */

type SchemaNode = Record<string, unknown>

/** Messages for the schema's patterns, which say more than "must match ^...$". Tested to cover them all. */
export const PATTERN_HINTS: Readonly<Record<string, string>> = {
  '^[A-Za-z0-9][A-Za-z0-9._-]*$':
    'must start with a letter or digit and hold only letters, digits, ".", "_" and "-"',
  '^\\d+(\\.\\d+)?\\s*(B|KB|KiB|MB|MiB|GB|GiB|TB|TiB)?$':
    'must be a size such as 2GiB, 512MiB or 500MB (units B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), or a number of bytes',
  '^(mqtts?|wss?|tcp|ssl)://':
    'must be a broker URL starting with mqtt://, mqtts://, ws://, wss://, tcp:// or ssl://, e.g. mqtt://broker:1883',
  '^https?://': 'must be a URL starting with https:// (or http://), e.g. https://hajri.example.com',
  '^[^:]+:\\d{1,5}$|^\\[[0-9a-fA-F:]+\\]:\\d{1,5}$': 'must be host:port, e.g. 127.0.0.1:9410 or [::1]:9410',
  '^(0|[1-9]\\d{0,2})$': 'must be a device status number from 0 to 999, without leading zeros',
  '^[A-Za-z0-9][A-Za-z0-9_-]*$':
    'must be a serial number as the terminal shows it: letters and digits (and "_" or "-"), e.g. CJDE193560303',
  '^[A-Za-z0-9._-]+$': 'must hold only letters, digits, ".", "_" and "-", e.g. E',
  '^[A-Za-z0-9.:_-]+$': "must be the terminal's IP address or host name, e.g. 192.168.1.201",
  '^\\d{1,9}[smh]?$': 'must be a duration in seconds, minutes or hours, e.g. 30s, 5m or 1h',
}

const DATE_TIME_MESSAGE =
  'must be an RFC 3339 time with an offset, e.g. 2020-01-01T00:00:00Z or 2020-01-01T00:00:00+05:30'

let compiled: ValidateFunction | undefined

function validator(): ValidateFunction {
  if (compiled) return compiled
  const ajv = new Ajv({
    // Every wrong field in one pass: IT staff fix the file once, not once per error.
    allErrors: true,
    // Defaults come from the schema only. load.ts has filled them already (schema-defaults.ts, which
    // also reaches into a union's branches, where ajv does not), so this finds nothing left to fill;
    // it stays on so that validation alone also completes a document.
    useDefaults: true,
    // YAML already gives numbers and booleans their types; "9600" in quotes is a mistake to report.
    coerceTypes: false,
    // Unknown settings are refused (additionalProperties: false), never silently dropped.
    removeAdditional: false,
    // `.inf` and `.nan` are YAML numbers, but no setting is infinite.
    strictNumbers: true,
    // The parent schema, to explain unions and suggest known names; the data's value is never shown.
    verbose: true,
    strict: false,
  })
  // The same reading of RFC 3339 as the punch intake uses for site.clockFloor (shared/time.ts).
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => parseTimestamp(s) !== undefined })
  compiled = ajv.compile(AgentConfigSchema)
  return compiled
}

/** Validates `document` (defaults filled in place) and adds a problem for each wrong field. */
export function checkAgainstSchema(document: unknown, problems: ProblemList): void {
  const validate = validator()
  if (validate(document)) return
  for (const { at, message } of describeErrors(validate.errors ?? [], document)) problems.add(at, message)
}

function segmentsOf(pointer: string, document: unknown): PathSegment[] {
  const out: PathSegment[] = []
  if (pointer === '') return out
  let node = document
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (Array.isArray(node)) {
      out.push(Number(key))
      node = node[Number(key)]
    } else {
      out.push(key)
      node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined
    }
  }
  return out
}

function describeErrors(
  errors: readonly ErrorObject[],
  document: unknown,
): { at: PathSegment[]; message: string }[] {
  const out: { at: PathSegment[]; message: string }[] = []
  const skip = new Set<ErrorObject>()
  // Unions first, outermost first: each either hands over to the branch the value was meant for,
  // or is reported as one message instead of one per branch.
  const unions = errors
    .filter((e) => e.keyword === 'anyOf')
    .sort((a, b) => a.schemaPath.length - b.schemaPath.length)
  for (const union of unions) {
    if (skip.has(union)) continue
    skip.add(union)
    const summary = explainUnion(union, errors, skip)
    if (summary) out.push({ at: [...segmentsOf(union.instancePath, document), ...summary.under], ...summary })
  }
  for (const error of errors) {
    if (skip.has(error)) continue
    const { under, message } = describeError(error)
    out.push({ at: [...segmentsOf(error.instancePath, document), ...under], message })
  }
  return out
}

/**
 * A value that matches no branch of a union. If one branch fits it in kind (the right type, the
 * right `type:` tag) and fails on details, that branch's errors stand alone; otherwise the union is
 * described as a whole ("must be one of 5, 6, 7, 8").
 */
function explainUnion(
  union: ErrorObject,
  errors: readonly ErrorObject[],
  skip: Set<ErrorObject>,
): { under: string[]; message: string } | undefined {
  const prefix = `${union.schemaPath}/`
  const byBranch = new Map<number, ErrorObject[]>()
  // The same union is evaluated for every device: its branches' errors are those under this value.
  const within = (e: ErrorObject) =>
    e.instancePath === union.instancePath || e.instancePath.startsWith(`${union.instancePath}/`)
  for (const error of errors) {
    if (!error.schemaPath.startsWith(prefix) || !within(error)) continue
    const branch = Number(error.schemaPath.slice(prefix.length).split('/')[0])
    byBranch.set(branch, [...(byBranch.get(branch) ?? []), error])
  }
  const tag = tagOf(((union.parentSchema as SchemaNode | undefined)?.anyOf ?? []) as SchemaNode[])
  // A branch the value is not of: the wrong type, the wrong tag, or no tag to tell.
  const misfit = (e: ErrorObject) =>
    (['type', 'const', 'enum'].includes(e.keyword) && e.instancePath === union.instancePath) ||
    (e.keyword === 'required' &&
      e.instancePath === union.instancePath &&
      (e.params as { missingProperty?: string }).missingProperty === tag) ||
    (e.keyword === 'const' &&
      e.instancePath.startsWith(`${union.instancePath}/`) &&
      !e.instancePath.slice(union.instancePath.length + 1).includes('/'))
  const fits = [...byBranch].filter(([, branchErrors]) => !branchErrors.some(misfit))
  fits.sort((a, b) => a[1].length - b[1].length)
  const best = fits[0]?.[0]
  for (const [branch, branchErrors] of byBranch) {
    if (branch !== best) for (const e of branchErrors) skip.add(e)
  }
  if (best !== undefined) return undefined
  return describeUnion(union)
}

function describeUnion(union: ErrorObject): { under: string[]; message: string } {
  const branches = ((union.parentSchema as SchemaNode | undefined)?.anyOf ?? []) as SchemaNode[]
  const data = union.data
  if (branches.every((b) => 'const' in b)) {
    return { under: [], message: `must be one of ${branches.map((b) => JSON.stringify(b.const)).join(', ')}` }
  }
  // Mappings told apart by a tag (framing: {type: line} or {type: stx-etx}).
  const tag = tagOf(branches)
  if (tag !== undefined) {
    const values = branches.map((b) =>
      JSON.stringify((b.properties as Record<string, SchemaNode>)[tag]?.const),
    )
    if (typeof data === 'object' && data !== null && !Array.isArray(data)) {
      const missing = (data as Record<string, unknown>)[tag] === undefined
      return {
        under: [tag],
        message: missing ? `is required: one of ${values.join(', ')}` : `must be one of ${values.join(', ')}`,
      }
    }
    return { under: [], message: `must be a mapping with ${tag}: ${values.join(' or ')}` }
  }
  const kinds = branches.map((b) => (typeof b.description === 'string' ? b.description : typeName(b.type)))
  return { under: [], message: `must be ${kinds.join(' or ')}` }
}

function tagOf(branches: readonly SchemaNode[]): string | undefined {
  const first = branches[0]?.properties as Record<string, SchemaNode> | undefined
  if (!first) return undefined
  return Object.keys(first).find((key) =>
    branches.every((b) => {
      const property = (b.properties as Record<string, SchemaNode> | undefined)?.[key]
      return property !== undefined && 'const' in property
    }),
  )
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  string: 'text',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping (key: value)',
  null: 'empty',
}

function typeName(type: unknown): string {
  const types = Array.isArray(type) ? type : [type]
  return types.map((t) => TYPE_NAMES[String(t)] ?? String(t)).join(' or ')
}

function describeError(error: ErrorObject): { under: string[]; message: string } {
  const params = error.params as Record<string, unknown>
  const parent = (error.parentSchema ?? {}) as SchemaNode
  switch (error.keyword) {
    case 'required':
      return { under: [String(params.missingProperty)], message: 'is required' }
    case 'additionalProperties': {
      const key = String(params.additionalProperty)
      const patterns = Object.keys((parent.patternProperties as SchemaNode | undefined) ?? {})
      if (patterns.length > 0) {
        const hint = patterns.map((p) => PATTERN_HINTS[p] ?? `must match ${p}`).join(' or ')
        return { under: [key], message: `is not allowed here: a key here ${hint}` }
      }
      const known = Object.keys((parent.properties as SchemaNode | undefined) ?? {})
      const near = closest(key, known)
      return {
        under: [key],
        message: `is not a known setting${near ? ` (did you mean ${near}?)` : ''}; known here: ${known.join(', ')}`,
      }
    }
    case 'type': {
      const expected = typeName(params.type)
      const quoted =
        params.type === 'string' && (typeof error.data === 'number' || typeof error.data === 'boolean')
      return {
        under: [],
        message: quoted
          ? `must be ${expected} (in YAML, put a value that looks like a number or true/false in quotes)`
          : `must be ${expected}`,
      }
    }
    case 'enum':
      return {
        under: [],
        message: `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      }
    case 'const':
      return { under: [], message: `must be ${JSON.stringify(params.allowedValue)}` }
    case 'pattern':
      return {
        under: [],
        message: PATTERN_HINTS[String(params.pattern)] ?? `must match ${String(params.pattern)}`,
      }
    case 'format':
      return {
        under: [],
        message: params.format === 'date-time' ? DATE_TIME_MESSAGE : `must be a ${String(params.format)}`,
      }
    case 'minLength':
      return {
        under: [],
        message:
          params.limit === 1 ? 'must not be empty' : `must be at least ${String(params.limit)} characters`,
      }
    case 'maxLength':
      return {
        under: [],
        message:
          params.limit === 1
            ? 'must be a single character'
            : `must be at most ${String(params.limit)} characters`,
      }
    case 'minItems':
      return {
        under: [],
        message: params.limit === 1 ? 'must list at least one' : `must list at least ${String(params.limit)}`,
      }
    default:
      return { under: [], message: error.message ?? 'is not valid' }
  }
}

/** A known name the unknown one is probably a typo of: same letters in another case, or 1–2 edits away. */
function closest(unknown: string, known: readonly string[]): string | undefined {
  const lower = unknown.toLowerCase()
  let best: { name: string; distance: number } | undefined
  for (const name of known) {
    const distance = name.toLowerCase() === lower ? 0 : editDistance(lower, name.toLowerCase())
    if (distance <= (name.length > 5 ? 2 : 1) && (!best || distance < best.distance))
      best = { name, distance }
  }
  return best?.name
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      )
    }
    previous = current
  }
  return previous[b.length] ?? 0
}
