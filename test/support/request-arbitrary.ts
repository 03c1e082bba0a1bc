/**
 * fast-check arbitraries for malformed HTTP requests to one route of the cloud, derived from the route's
 * path and its OpenAPI operation (the same TypeBox schemas that validate it), so a new route is fuzzed
 * without new code. Each request starts near-valid (so some reach the handler) and is then broken in
 * one or more of the ways integrators and attackers break requests.
 */
import fc from 'fast-check'

/** The JSON Schema subset that TypeBox routes produce, as the OpenAPI document shows it. */
export interface JsonSchema {
  type?: string | string[]
  enum?: unknown[]
  const?: unknown
  format?: string
  pattern?: string
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  items?: JsonSchema
  minItems?: number
  maxItems?: number
  properties?: Record<string, JsonSchema>
  required?: string[]
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
}

export interface OpenApiParameter {
  in: string
  name: string
  required?: boolean
  schema?: JsonSchema
}

export interface OpenApiOperation {
  parameters?: OpenApiParameter[]
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> }
  responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>
}

export interface FuzzRequest {
  method: 'GET' | 'DELETE' | 'POST' | 'PUT' | 'PATCH'
  url: string
  headers: Record<string, string>
  payload?: string | Buffer
}

export interface FuzzContext {
  /** Near-valid values for a field of this name wherever it appears (body, query, path, header). */
  hints: Record<string, fc.Arbitrary<unknown>>
  /** A near-valid RFC 3339 timestamp, for `date-time` fields without a hint. */
  timestamp: fc.Arbitrary<string>
  /** The Authorization header, or undefined for none. */
  authorization: fc.Arbitrary<string | undefined>
  /**
   * For form-encoded routes (the OAuth endpoints): how a client authenticates, by a header, by body
   * parameters, or both at once. Without it, such routes get `authorization` and no such parameters.
   */
  clientAuthentication?: ClientAuthenticationStrategy
  /**
   * Near-valid bodies, by media type, for routes whose body is text other than JSON or a form (an
   * employee CSV). A route with such a body and no entry here has no generator strategy.
   */
  textBodies?: Record<string, fc.Arbitrary<string>>
}

/** One way a client authenticated (or failed to): RFC 6749 §2.3.1 allows a header or body parameters. */
export interface ClientAuthentication {
  /** The Authorization header, or undefined for none. */
  authorization: string | undefined
  /** Body parameters (client_secret_post), merged into whatever body is sent. */
  params: [name: string, value: string][]
}

export interface ClientAuthenticationStrategy {
  /** The body fields it owns: the near-valid body leaves them out, so it alone decides them. */
  fields: readonly string[]
  arbitrary: fc.Arbitrary<ClientAuthentication>
}

export const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded'

type Method = FuzzRequest['method']
const METHODS_WITH_BODY = new Set<string>(['POST', 'PUT', 'PATCH'])
const METHODS_WITHOUT_BODY = new Set<string>(['GET', 'DELETE'])
const STATIC_SEGMENT = /^[A-Za-z0-9._~-]+$/
const PARAM_SEGMENT = /^:([A-Za-z_][A-Za-z0-9_]*)$/

// Strings that have broken parsers, validators and SQL before, by kind. None contains an SQL keyword,
// so a problem that echoes one back cannot be mistaken for a leaked query.
const NASTY_STRINGS = [
  ...['', ' ', '\u0000', 'a\u0000b', '\t', '\r\n', '\\', '"', "'", '%', '%zz', '?', '$1'],
  ...['null', 'undefined', 'true', '[]', '{}', '0', '-1', '-0', '1.5', '1e309', '-1e309', 'NaN', 'Infinity'],
  ...['0x10', '9007199254740993', '\uFEFF', '\u202E', '\u2028', '😀', 'é', 'Ω', 'ﬁ', 'İ'],
  ...["' OR '1'='1", '1; DROP TABLE punches --', '../../etc/passwd', '<script>alert(1)</script>'],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a log4shell probe, meant literally
  ...['${jndi:ldap://x}', '__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString'],
  // Near misses of real values: case, padding, a trailing control character.
  ...['IN ', 'in', 'OUT\u0000', 'E001 ', ' E001', 'E001\n', 'active', 'ACTIVE '],
]

const BAD_DATES = [
  ...['2026-13-01T00:00:00Z', '2026-02-30T00:00:00+05:30', '2026-11-21T24:00:00Z', '2026-11-21T09:60:00Z'],
  ...['2026-11-21T09:00:00', '2026-11-21', '09:00:00Z', '2026-11-21 09:00:00+05:30', '2026-11-21t09:00:00z'],
  ...['2026-12-31T23:59:60Z', '2026-11-21T09:00:00+24:00', '2026-11-21T09:00:00+05:60'],
  ...['+002026-11-21T09:00:00Z', '2026-11-21T09:00:00.1234567890Z', '2026-11-21T09:00:00,5Z'],
  ...['1763700000', 'Sat, 21 Nov 2026 09:00:00 GMT', '0000-01-01T00:00:00Z', '1899-12-31T23:59:59Z'],
  ...['2200-01-01T00:00:00Z', '9999-12-31T23:59:59Z'],
]

const BAD_NUMBERS = [
  ...['0', '201', '-1', '1e309', 'NaN', '', '1.5', 'Infinity', '-0', '0x10', '+5', ' 5', '5 ', '1e2'],
  ...['50abc', '2147483648', '9'.repeat(400), '٣', 'true', '[]'],
]

// Raw JSON fragments: not valid JSON, or valid JSON that JavaScript reads oddly.
const RAW_FRAGMENTS = [
  ...['NaN', 'Infinity', '-Infinity', 'undefined', '1e309', '-1e309', '1e-400', '1234567890123456789012345'],
  ...['01', '.5', '+1', "'single'", '"unterminated', '"bad \\x escape"', '"\\ud800"', '"\\u0000"'],
  ...['"\\uZZZZ"', '"raw\ttab"', '[1,]', '{"a":1,}', '{,}', '[', '{', 'tru', '/* comment */ 1', '"a" "b"'],
]

const PERCENT_JUNK = ['%', '%zz', '%E0%A4', '%00', '%FF', '%C0%AF', '+', '%2B', '%26', '%3D', '%2F', '%0A']

/** Percent-encodes, replacing lone surrogates first: encodeURIComponent throws on them. */
export function encode(text: string): string {
  try {
    return encodeURIComponent(text)
  } catch {
    return encodeURIComponent(Buffer.from(text, 'utf8').toString('utf8'))
  }
}

// Header values as a client could send them: Latin-1 printable, no line breaks.
const headerChar = fc
  .integer({ min: 0x20, max: 0xff })
  .filter((c) => c < 0x7f || c >= 0xa0)
  .map((c) => String.fromCharCode(c))
export const headerText = fc.string({ unit: headerChar, maxLength: 60 })

export const badText: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.constantFrom(...BAD_DATES) },
  { weight: 1, arbitrary: fc.integer({ min: 65, max: 20_000 }).map((n) => 'A'.repeat(n)) },
  { weight: 1, arbitrary: fc.double().map(String) },
)

const NASTY_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'hasOwnProperty',
  'toString',
  '',
  'colour',
  '$where',
]
const nastyKey = fc.oneof(fc.constantFrom(...NASTY_KEYS), fc.string({ maxLength: 12 }))

const ODD_VALUES: unknown[] = [
  ...[null, true, false, 0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 2, Number.MIN_VALUE, [], {}, [null]],
  JSON.parse('{"__proto__":{"polluted":true}}'),
  JSON.parse('{"constructor":{"prototype":{"polluted":true}}}'),
]

export const badValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: badText },
  { weight: 3, arbitrary: fc.constantFrom(...ODD_VALUES) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(nastyKey, badText, { maxKeys: 3 }) },
)

/** Deeply nested JSON text, up to what fits in the 1 MiB body limit. */
const deepJson = fc.oneof(
  fc.integer({ min: 1_000, max: 200_000 }).map((d) => '['.repeat(d) + ']'.repeat(d)),
  fc.integer({ min: 1_000, max: 100_000 }).map((d) => `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`),
)

const rawFragment = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...RAW_FRAGMENTS) },
  { weight: 1, arbitrary: deepJson },
)

/** A value that passes `schema`, more or less: the starting point that the mutations break. */
export function valueArbitrary(schema: JsonSchema, ctx: FuzzContext, name?: string): fc.Arbitrary<unknown> {
  const hint = name === undefined ? undefined : ctx.hints[name]
  if (hint) return hint
  if (schema.enum) return fc.constantFrom(...schema.enum)
  if ('const' in schema) return fc.constant(schema.const)
  const alternatives = schema.anyOf ?? schema.oneOf
  if (alternatives) return fc.oneof(...alternatives.map((s) => valueArbitrary(s, ctx, name)))
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : []
  if (types.length === 0) return fc.jsonValue({ maxDepth: 2 })
  return fc.oneof(
    ...types.map((type) => ({
      weight: type === 'null' ? 1 : 4,
      arbitrary: typedArbitrary(type, schema, ctx),
    })),
  )
}

function typedArbitrary(type: string, schema: JsonSchema, ctx: FuzzContext): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null)
    case 'boolean':
      return fc.boolean()
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000 })
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true })
    case 'string': {
      if (schema.format === 'date-time') return ctx.timestamp
      const minLength = schema.minLength ?? 0
      const maxLength = Math.min(schema.maxLength ?? 40, 40)
      if (schema.pattern) {
        return fc
          .stringMatching(new RegExp(schema.pattern), { size: 'small' })
          .filter((s) => s.length >= minLength && s.length <= (schema.maxLength ?? Number.POSITIVE_INFINITY))
      }
      return fc.string({ minLength, maxLength: Math.max(minLength, maxLength) })
    }
    case 'array':
      return fc.array(schema.items ? valueArbitrary(schema.items, ctx) : fc.jsonValue({ maxDepth: 2 }), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.max(schema.minItems ?? 0, Math.min(schema.maxItems ?? 5, 5)),
      })
    case 'object': {
      const properties = schema.properties ?? {}
      const model: Record<string, fc.Arbitrary<unknown>> = {}
      for (const [key, property] of Object.entries(properties))
        model[key] = valueArbitrary(property, ctx, key)
      if (Object.keys(model).length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue())
      return fc.record(model, { requiredKeys: (schema.required ?? []).filter((k) => k in model) })
    }
    default:
      throw new Error(`no generator strategy for JSON Schema type ${type}`)
  }
}

type Path = (string | number)[]

/** Every node of a JSON value down to depth 4, as paths from the root (the root is []). */
function pathsOf(value: unknown, path: Path = [], out: Path[] = []): Path[] {
  out.push(path)
  if (path.length >= 4 || typeof value !== 'object' || value === null) return out
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) pathsOf(v, [...path, i], out)
  } else for (const [k, v] of Object.entries(value)) pathsOf(v, [...path, k], out)
  return out
}

/** A copy of `value` whose node at `path` is `replacement` (or removed), set as an own property. */
function replaceAt(value: unknown, path: Path, replacement: unknown, remove = false): unknown {
  if (path.length === 0) return remove ? undefined : replacement
  const [head, ...rest] = path as [string | number, ...Path]
  if (Array.isArray(value)) {
    const copy = [...value]
    if (remove && rest.length === 0) copy.splice(Number(head), 1)
    else copy[Number(head)] = replaceAt(copy[Number(head)], rest, replacement, remove)
    return copy
  }
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) }
  if (remove && rest.length === 0) delete copy[head]
  // defineProperty, not assignment: a key named __proto__ must become a real property of the JSON.
  else
    Object.defineProperty(copy, head, {
      value: replaceAt(copy[head], rest, replacement, remove),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  return copy
}

function pick<T>(items: readonly T[], n: number): T {
  return items[n % items.length] as T
}

const MARK = '\u0001fuzz-raw\u0001'

/** JSON text of `value` with the node at `path` replaced by raw (possibly invalid) JSON text. */
function spliceRaw(value: unknown, path: Path, raw: string): string {
  return (JSON.stringify(replaceAt(value, path, MARK)) ?? '').replace(JSON.stringify(MARK), () => raw)
}

/** Paths of the arrays that `schema` bounds with maxItems, among an object's properties. */
function boundedArrays(schema: JsonSchema | undefined, path: Path = []): { path: Path; max: number }[] {
  if (!schema) return []
  const own = schema.type === 'array' && schema.maxItems !== undefined ? [{ path, max: schema.maxItems }] : []
  const nested = Object.entries(schema.properties ?? {}).flatMap(([k, s]) => boundedArrays(s, [...path, k]))
  return [...own, ...nested]
}

function getAt(value: unknown, path: Path): unknown {
  let node = value
  for (const key of path) node = (node as Record<string | number, unknown> | undefined)?.[key]
  return node
}

interface Body {
  payload?: string | Buffer
  contentType?: string
}

/** Body text: near-valid, then broken at the level of a field, of the document, or of the bytes. */
function bodyArbitrary(schema: JsonSchema | undefined, ctx: FuzzContext): fc.Arbitrary<string | Buffer> {
  const value = schema ? valueArbitrary(schema, ctx) : fc.jsonValue({ maxDepth: 2 })
  const text = value.map((v) => JSON.stringify(v) ?? '')
  const atPath = fc.tuple(value, fc.nat()).map(([v, n]) => ({ v, path: pick(pathsOf(v), n) }))
  const arrays = boundedArrays(schema)
  const variants: fc.WeightedArbitrary<string | Buffer>[] = [
    { weight: 20, arbitrary: text },
    {
      weight: 20,
      arbitrary: fc
        .tuple(atPath, badValue)
        .map(([{ v, path }, bad]) => JSON.stringify(replaceAt(v, path, bad)) ?? ''),
    },
    {
      weight: 10,
      arbitrary: fc.tuple(atPath, rawFragment).map(([{ v, path }, raw]) => spliceRaw(v, path, raw)),
    },
    {
      weight: 8,
      arbitrary: atPath.map(({ v, path }) => JSON.stringify(replaceAt(v, path, undefined, true)) ?? ''),
    },
    {
      // Unknown fields, prototype-pollution keys among them, added to any object of the body.
      weight: 10,
      arbitrary: fc.tuple(atPath, nastyKey, badValue).map(([{ v, path }, key, bad]) => {
        const target = getAt(v, path)
        const at = typeof target === 'object' && target !== null && !Array.isArray(target) ? path : []
        return JSON.stringify(replaceAt(v, [...at, key], bad)) ?? ''
      }),
    },
    {
      // A key given twice: JSON.parse keeps the last, so the bad value may win or lose.
      weight: 4,
      arbitrary: fc
        .tuple(
          text,
          fc.constantFrom(...Object.keys(schema?.properties ?? {}), '__proto__'),
          badValue,
          fc.boolean(),
        )
        .map(([t, key, bad, last]) => {
          if (!t.startsWith('{') || t === '{}') return t
          const pair = `${JSON.stringify(key)}:${JSON.stringify(bad) ?? 'null'}`
          return last ? `${t.slice(0, -1)},${pair}}` : `{${pair},${t.slice(1)}`
        }),
    },
    { weight: 8, arbitrary: fc.tuple(text, fc.nat()).map(([t, n]) => t.slice(0, n % Math.max(t.length, 1))) },
    { weight: 5, arbitrary: value.map((v) => JSON.stringify([v])) },
    { weight: 4, arbitrary: badValue.map((v) => JSON.stringify(v) ?? '') },
    { weight: 3, arbitrary: fc.oneof(fc.string({ unit: 'binary', maxLength: 80 }), rawFragment) },
    { weight: 3, arbitrary: fc.constantFrom('', ' ', '\n', 'null') },
    {
      // Around the 1 MiB body limit, either side.
      weight: 1,
      arbitrary: fc.integer({ min: 1_000_000, max: 1_100_000 }).map((n) => `{"padding":"${'x'.repeat(n)}"}`),
    },
    {
      weight: 4,
      arbitrary: fc
        .tuple(
          text,
          fc.nat(),
          fc.constantFrom([0xff], [0xc3, 0x28], [0xe0, 0xa4], [0xed, 0xa0, 0x80], [0xc0, 0xaf]),
        )
        .map(([t, n, bytes]) => {
          const b = Buffer.from(t)
          const at = n % (b.length + 1)
          return Buffer.concat([b.subarray(0, at), Buffer.from(bytes), b.subarray(at)])
        }),
    },
    { weight: 2, arbitrary: text.map((t) => Buffer.from(`\uFEFF${t}`, 'utf16le')) },
    { weight: 1, arbitrary: text.map((t) => `\uFEFF${t}`) },
  ]
  if (arrays.length > 0) {
    // Arrays at their maxItems and one over: the most work one request may ask for, and the first refusal.
    variants.push({
      weight: 3,
      arbitrary: fc.tuple(value, fc.constantFrom(0, 1)).map(([v, over]) => {
        let grown = v
        for (const { path, max } of arrays) {
          const items = getAt(grown, path)
          const seed = Array.isArray(items) && items.length > 0 ? items : [{}]
          grown = replaceAt(
            grown,
            path,
            Array.from({ length: max + over }, (_, i) => seed[i % seed.length]),
          )
        }
        return JSON.stringify(grown) ?? ''
      }),
    })
  }
  return fc.oneof(...variants)
}

const ODD_CONTENT_TYPES = [
  ...['application/json; charset=utf-16', 'application/json; charset=latin1', 'Application/JSON'],
  ...['application/json;;;', 'application/json, text/plain', 'text/plain', 'text/json', 'application/xml'],
  ...['application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json-patch+json'],
  ...['application/problem+json', 'application/', '', ';', '*/*'],
]

const contentType = fc.oneof(
  { weight: 40, arbitrary: fc.constant('application/json') },
  { weight: 4, arbitrary: fc.constant('application/json; charset=utf-8') },
  { weight: 4, arbitrary: fc.constant(undefined) },
  { weight: 12, arbitrary: fc.constantFrom(...ODD_CONTENT_TYPES) },
  { weight: 2, arbitrary: headerText },
)

function bodyAndType(schema: JsonSchema | undefined, ctx: FuzzContext, hasBody: boolean): fc.Arbitrary<Body> {
  const withBody = fc.record({ payload: bodyArbitrary(schema, ctx), contentType })
  if (hasBody) {
    return fc.oneof(
      { weight: 30, arbitrary: withBody },
      { weight: 1, arbitrary: contentType.map((ct) => ({ contentType: ct })) },
    )
  }
  // GET and DELETE carry no body, but a client may still send one.
  return fc.oneof({ weight: 9, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: withBody })
}

/**
 * A text body of `mediaType` (CSV): near-valid, then cut short, with junk or invalid UTF-8 put in,
 * replaced by other text or JSON, around the body limit; under its media type, or another.
 */
function textBodyAndType(mediaType: string, near: fc.Arbitrary<string>): fc.Arbitrary<Body> {
  const at = (t: string, n: number) => n % (t.length + 1)
  const payload: fc.Arbitrary<string | Buffer> = fc.oneof(
    { weight: 12, arbitrary: near },
    { weight: 4, arbitrary: fc.tuple(near, fc.nat()).map(([t, n]) => t.slice(0, at(t, n))) },
    {
      weight: 6,
      arbitrary: fc
        .tuple(near, fc.nat(), badText)
        .map(([t, n, bad]) => t.slice(0, at(t, n)) + bad + t.slice(at(t, n))),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(near, fc.nat(), fc.constantFrom([0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80]))
        .map(([t, n, bytes]) => {
          const b = Buffer.from(t)
          const i = n % (b.length + 1)
          return Buffer.concat([b.subarray(0, i), Buffer.from(bytes), b.subarray(i)])
        }),
    },
    { weight: 2, arbitrary: near.map((t) => Buffer.from(`\uFEFF${t}`, 'utf16le')) },
    { weight: 3, arbitrary: fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), rawFragment) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)) },
    { weight: 2, arbitrary: fc.constantFrom('', ' ', '\n', '\uFEFF', '"', '""', ',,,', '\r\n\r\n') },
    {
      // Around the 1 MiB body limit, either side: long lines, so that the file is cheap to read.
      weight: 1,
      arbitrary: fc
        .tuple(near, fc.integer({ min: 900, max: 1_100 }))
        .map(([t, n]) => `${t}\n${`${'x'.repeat(1020)},y\n`.repeat(n)}`),
    },
  )
  const type = fc.oneof(
    { weight: 30, arbitrary: fc.constant<string | undefined>(mediaType) },
    { weight: 4, arbitrary: fc.constant(`${mediaType}; charset=utf-8`) },
    { weight: 3, arbitrary: fc.constant(undefined) },
    {
      weight: 8,
      arbitrary: fc.constantFrom(...ODD_CONTENT_TYPES, 'application/json', mediaType.toUpperCase()),
    },
    { weight: 1, arbitrary: headerText },
  )
  return fc.oneof(
    { weight: 30, arbitrary: fc.record({ payload, contentType: type }) },
    { weight: 1, arbitrary: type.map((contentType) => ({ contentType })) },
  )
}

/**
 * RFC 6749 Appendix B: application/x-www-form-urlencoded as browsers and most libraries write it
 * (a space is "+"). URLSearchParams replaces lone surrogates, so it never throws.
 */
export function formEncode(text: string): string {
  return new URLSearchParams({ v: text }).toString().slice(2)
}

type FormEncoding = 'plus' | 'percent' | 'raw'

/**
 * Form text for pairs: "+" for spaces, or %20 (both decode the same), or nothing encoded (so a
 * "&", "=", "+" or "%" in a value changes what the server reads). Raw pairs go as they are.
 */
function encodeForm(pairs: Pair[], encoding: FormEncoding): string {
  return pairs
    .map(([k, v, raw]) => {
      if (raw) return v === '' ? k : `${k}=${v}`
      if (encoding === 'plus') return `${formEncode(k)}=${formEncode(v)}`
      if (encoding === 'percent') return `${encode(k)}=${encode(v)}`
      return `${k}=${v}`
    })
    .join('&')
}

/** The same pairs as a JSON object, written out so that a repeated name stays repeated. */
function jsonOfPairs(pairs: Pair[], odd: { index: number; value: unknown } | undefined): string {
  const members = pairs
    .filter(([, , raw]) => !raw)
    .map(([k, v], i) => `${JSON.stringify(k)}:${JSON.stringify(odd?.index === i ? odd.value : v) ?? 'null'}`)
  return `{${members.join(',')}}`
}

// Fragments of form text that no encoder writes: empty names, lone "=", broken %-escapes.
const RAW_FORM_JUNK = [
  '&',
  '=',
  '==',
  '=x',
  'a',
  '%',
  '%zz',
  'a=%zz',
  '%E0%A4=1',
  '+=+',
  '&&&',
  'x=%00',
  'x=1=2',
]

/** Values at and around the OAuth parameter limit (1024), and up to the form body limit (16 KiB). */
const hugeText = fc.oneof(
  fc.constantFrom(1023, 1024, 1025).map((n) => 'A'.repeat(n)),
  fc.integer({ min: 1026, max: 17_000 }).map((n) => 'A'.repeat(n)),
)

type FormMutation = (pairs: Pair[]) => Pair[]

function formMutation(names: readonly string[]): fc.Arbitrary<FormMutation> {
  const at = (pairs: Pair[], n: number) => n % Math.max(pairs.length, 1)
  const replaceValue =
    (n: number, value: string, raw = false): FormMutation =>
    (pairs) =>
      pairs.length === 0
        ? [[pick(names, n), value, raw]]
        : pairs.map((p, i) => (i === at(pairs, n) ? [p[0], value, raw] : p))
  return fc.oneof(
    // RFC 6749 §3.2: a parameter given twice, with the same value or another.
    {
      weight: 4,
      arbitrary: fc.tuple(fc.nat(), fc.option(badText)).map(
        ([n, other]): FormMutation =>
          (pairs) => {
            const pair = pairs[at(pairs, n)] ?? [pick(names, n), 'x']
            return [...pairs, [pair[0], other ?? pair[1]]]
          },
      ),
    },
    // Unknown parameters, which must be ignored.
    {
      weight: 3,
      arbitrary: fc.tuple(nastyKey, badText).map(
        ([k, v]): FormMutation =>
          (pairs) => [...pairs, [k, v]],
      ),
    },
    { weight: 4, arbitrary: fc.tuple(fc.nat(), badText).map(([n, v]) => replaceValue(n, v)) },
    { weight: 2, arbitrary: fc.tuple(fc.nat(), hugeText).map(([n, v]) => replaceValue(n, v)) },
    { weight: 2, arbitrary: fc.tuple(fc.nat(), undecodable).map(([n, v]) => replaceValue(n, v)) },
    {
      weight: 2,
      arbitrary: fc.tuple(fc.nat(), fc.constantFrom(...PERCENT_JUNK)).map(
        ([n, junk]) =>
          (pairs: Pair[]) =>
            replaceValue(n, `${encode(pairs[at(pairs, n)]?.[1] ?? '')}${junk}`, true)(pairs),
      ),
    },
    {
      weight: 2,
      arbitrary: fc.nat().map(
        (n): FormMutation =>
          (pairs) =>
            pairs.filter((_, i) => i !== at(pairs, n)),
      ),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(...RAW_FORM_JUNK).map(
        (junk): FormMutation =>
          (pairs) => [...pairs, [junk, '', true]],
      ),
    },
    {
      // Names that are almost right: another case, brackets, a trailing space.
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.nat(),
          fc.constantFrom<(k: string) => string>(
            (k) => k.toUpperCase(),
            (k) => `${k}[]`,
            (k) => `${k} `,
          ),
        )
        .map(
          ([n, rename]): FormMutation =>
            (pairs) =>
              pairs.map((p, i) => (i === at(pairs, n) ? [rename(p[0]), p[1]] : p)),
        ),
    },
  )
}

const FORM_TYPES = [
  `${FORM_CONTENT_TYPE};charset=UTF-8`,
  `${FORM_CONTENT_TYPE}; charset=latin1`,
  'Application/X-WWW-Form-Urlencoded',
]

const formContentType = fc.oneof(
  { weight: 30, arbitrary: fc.constant(FORM_CONTENT_TYPE) },
  { weight: 6, arbitrary: fc.constantFrom(...FORM_TYPES) },
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 4, arbitrary: fc.constantFrom(...ODD_CONTENT_TYPES) },
)

/** The form body limit of the OAuth endpoints: bodies are generated up to it and just past it. */
const FORM_BODY_LIMIT = 16 * 1024

/**
 * A body for a route that takes forms (and JSON): near-valid parameters from the schema, the
 * client's authentication parameters among them, then broken as forms get broken.
 */
function formBodyAndType(
  schema: JsonSchema,
  jsonSchema: JsonSchema | undefined,
  ctx: FuzzContext,
  authParams: ClientAuthentication['params'],
): fc.Arbitrary<Body> {
  const owned = new Set(ctx.clientAuthentication?.fields ?? [])
  const properties = Object.entries(schema.properties ?? {}).filter(([name]) => !owned.has(name))
  const required = new Set(schema.required ?? [])
  const near = fc
    .tuple(
      ...properties.map(([name, property]) => {
        const value = valueArbitrary(property, ctx, name).map((v): Pair => [name, String(v ?? '')])
        if (required.has(name)) return value
        // Fields with a hint are the ones a valid request needs: present more often than not.
        const present = ctx.hints[name] ? 5 : 1
        return fc.oneof(
          { weight: present, arbitrary: value },
          { weight: 2, arbitrary: fc.constant(undefined) },
        )
      }),
      fc.nat(),
    )
    .map((items) => {
      const n = items.at(-1) as number
      const pairs = (items.slice(0, -1) as (Pair | undefined)[]).filter((p): p is Pair => p !== undefined)
      pairs.splice(n % (pairs.length + 1), 0, ...authParams)
      return pairs
    })
  const names = [...properties.map(([name]) => name), ...authParams.map(([name]) => name)]
  const mutated = fc
    .tuple(
      near,
      fc.oneof(
        { weight: 2, arbitrary: fc.constant([]) },
        {
          weight: 3,
          arbitrary: fc.array(formMutation(names.length > 0 ? names : ['x']), { minLength: 1, maxLength: 3 }),
        },
      ),
    )
    .map(([pairs, changes]) => changes.reduce((acc, change) => change(acc), pairs))
  const encoding = fc.oneof(
    { weight: 6, arbitrary: fc.constant<FormEncoding>('plus') },
    { weight: 3, arbitrary: fc.constant<FormEncoding>('percent') },
    { weight: 1, arbitrary: fc.constant<FormEncoding>('raw') },
  )
  const formText = fc.tuple(mutated, encoding).map(([pairs, how]) => encodeForm(pairs, how))
  const jsonText = fc
    .tuple(mutated, fc.option(fc.tuple(fc.nat(), badValue)))
    .map(([pairs, odd]) =>
      jsonOfPairs(
        pairs,
        odd === null ? undefined : { index: odd[0] % Math.max(pairs.length, 1), value: odd[1] },
      ),
    )
  return fc.oneof(
    { weight: 24, arbitrary: fc.record({ payload: formText, contentType: formContentType }) },
    { weight: 8, arbitrary: fc.record({ payload: jsonText, contentType: contentType }) },
    {
      // The body and its Content-Type disagree.
      weight: 2,
      arbitrary: fc.oneof(
        fc.record({ payload: formText, contentType: fc.constant<string | undefined>('application/json') }),
        fc.record({ payload: jsonText, contentType: fc.constant<string | undefined>(FORM_CONTENT_TYPE) }),
      ),
    },
    // JSON's own breakage: bad fragments, deep nesting, wrong bytes, a megabyte.
    { weight: 3, arbitrary: fc.record({ payload: bodyArbitrary(jsonSchema, ctx), contentType }) },
    {
      weight: 1,
      arbitrary: fc.tuple(formText, fc.integer({ min: -64, max: 64 })).map(([text, delta]): Body => {
        const prefix = `${text}&padding=`
        return {
          payload: prefix + 'x'.repeat(Math.max(FORM_BODY_LIMIT + delta - prefix.length, 0)),
          contentType: FORM_CONTENT_TYPE,
        }
      }),
    },
    { weight: 1, arbitrary: formContentType.map((ct): Body => ({ contentType: ct })) },
  )
}

function badParamValue(param: OpenApiParameter, ctx: FuzzContext): fc.Arbitrary<string> {
  const schema = param.schema ?? {}
  const specific: fc.WeightedArbitrary<string>[] = [{ weight: 2, arbitrary: badText }]
  if (schema.type === 'integer' || schema.type === 'number') {
    specific.push({ weight: 3, arbitrary: fc.constantFrom(...BAD_NUMBERS) })
  }
  if (schema.format === 'date-time') specific.push({ weight: 3, arbitrary: fc.constantFrom(...BAD_DATES) })
  const hint = ctx.hints[param.name]
  if (hint) {
    specific.push(
      { weight: 1, arbitrary: hint.chain((v) => mutatedText(String(v))) },
      { weight: 3, arbitrary: hint.chain((v) => mutatedJsonToken(String(v)) ?? mutatedText(String(v))) },
    )
  }
  return fc.oneof(...specific)
}

// Strings a database may refuse outright: PostgreSQL's text cannot hold NUL; a lone surrogate is not UTF-8.
const undecodable = fc.constantFrom('\u0000', 'E001\u0000', '\u0000pun_', '\ud800', 'a\udfffb')

/**
 * A base64url JSON token (our cursors are, and a client can decode them) with one node replaced or
 * removed, re-encoded: it passes the query schema and reaches the code that trusts its contents.
 * Undefined when the token is not base64url JSON.
 */
function mutatedJsonToken(token: string): fc.Arbitrary<string> | undefined {
  let decoded: unknown
  try {
    decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
  if (typeof decoded !== 'object' || decoded === null) return undefined
  const paths = pathsOf(decoded).filter((path) => path.length > 0)
  if (paths.length === 0) return undefined
  return fc
    .tuple(
      fc.nat(),
      fc.oneof(
        { weight: 3, arbitrary: badValue },
        { weight: 3, arbitrary: undecodable },
        { weight: 1, arbitrary: fc.oneof(fc.maxSafeInteger(), fc.double()) },
      ),
      fc.boolean(),
    )
    .map(([n, bad, remove]) => {
      const mutated = replaceAt(decoded, pick(paths, n), bad, remove && n % 3 === 0)
      return Buffer.from(JSON.stringify(mutated) ?? '').toString('base64url')
    })
}

/** A near-valid text broken in one place: truncated, a character changed, or junk put in. */
function mutatedText(text: string): fc.Arbitrary<string> {
  return fc.oneof(
    fc.nat({ max: Math.max(text.length - 1, 0) }).map((n) => text.slice(0, n)),
    fc
      .tuple(fc.nat({ max: text.length }), fc.constantFrom('=', '.', '+', '/', '%', ' ', 'A', '\u0000', 'é'))
      .map(([n, c]) => text.slice(0, n) + c + text.slice(n + 1)),
    fc.integer({ min: 513, max: 4_000 }).map((n) => text + 'A'.repeat(n)),
  )
}

/** Hand-made cursors: base64url JSON of the shapes the services read, with wrong types and values. */
export const forgedCursor: fc.Arbitrary<string> = fc
  .oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.dictionary(
      fc.constantFrom('e', 's', 'u', 'f', 't', 'k', 'x'),
      fc.oneof(
        fc.constantFrom<unknown>(
          '\u0000',
          'a\u0000',
          '\ud800',
          '',
          2 ** 53,
          -(2 ** 53),
          1.5,
          1e300,
          null,
          [],
        ),
        fc.oneof(fc.string({ unit: 'binary', maxLength: 10 }), fc.integer(), fc.maxSafeInteger()),
        fc.tuple(
          fc.oneof(fc.maxSafeInteger(), fc.string()),
          fc.oneof(fc.string({ unit: 'binary' }), fc.integer()),
        ),
        fc.tuple(fc.string({ unit: 'binary', maxLength: 30 })),
        fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
      ),
      { maxKeys: 5 },
    ),
  )
  .map((v) => Buffer.from(JSON.stringify(v) ?? '').toString('base64url'))

/** A query parameter; `raw` ones are sent as they are, not percent-encoded. */
type Pair = [name: string, value: string, raw?: boolean]
type Mutation = (pairs: Pair[]) => Pair[]
const add =
  (...extra: Pair[]): Mutation =>
  (pairs) => [...pairs, ...extra]
const set =
  (name: string, value: string): Mutation =>
  (pairs) => [...pairs.filter((q) => q[0] !== name), [name, value]]

/** The query string: near-valid parameters, then unknown, repeated, bad or badly encoded ones. */
function queryArbitrary(params: OpenApiParameter[], ctx: FuzzContext): fc.Arbitrary<string> {
  // Optional parameters are left out more often than not: filters that disagree with a cursor would
  // stop most requests at the first check.
  const near = fc
    .tuple(
      ...params.map((p) => {
        const value = valueArbitrary(p.schema ?? {}, ctx, p.name).map((v): Pair => [p.name, String(v ?? '')])
        const absent = fc.constant(undefined)
        return p.required
          ? value
          : fc.oneof({ weight: 2, arbitrary: absent }, { weight: 1, arbitrary: value })
      }),
    )
    .map((pairs) => pairs.filter((pair): pair is Pair => pair !== undefined))
  const encodedJunk = fc.constantFrom(...PERCENT_JUNK).map(
    (junk): Mutation =>
      (pairs) => {
        const [name, value] = pairs.at(-1) ?? ['x', '']
        return [...pairs.slice(0, -1), [name, `${encode(value)}${junk}`, true]]
      },
  )
  const mutation: fc.WeightedArbitrary<Mutation>[] = [
    { weight: 2, arbitrary: fc.tuple(nastyKey, badText).map(([k, v]) => add([k, v])) },
    { weight: 1, arbitrary: fc.constantFrom<Pair>(['a[b]', '1'], ['', ''], ['=', '=']).map((p) => add(p)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('&', '=', '=x', '==', '%', 'a=%zz', ';').map((j) => add([j, '', true])),
    },
    { weight: 1, arbitrary: encodedJunk },
  ]
  if (params.length > 0) {
    const named = fc.constantFrom(...params)
    const repeated = named.chain((p) =>
      fc
        .array(fc.oneof(valueArbitrary(p.schema ?? {}, ctx, p.name).map(String), badParamValue(p, ctx)), {
          minLength: 2,
          maxLength: 4,
        })
        .map((values) => add(...values.map((v): Pair => [p.name, v]))),
    )
    mutation.push(
      // One bad parameter on its own, so nothing else refuses the request before it is looked at.
      { weight: 4, arbitrary: named.chain((p) => badParamValue(p, ctx).map((bad) => () => [[p.name, bad]])) },
      { weight: 6, arbitrary: named.chain((p) => badParamValue(p, ctx).map((bad) => set(p.name, bad))) },
      // Repeated parameters reach the schema as arrays; bracketed and renamed ones are unknown.
      { weight: 2, arbitrary: repeated },
      { weight: 1, arbitrary: named.map((p) => add([`${p.name}[]`, '1'], [`${p.name}[0]`, '1'])) },
      { weight: 1, arbitrary: named.map((p) => add([p.name.toUpperCase(), '1'])) },
    )
  }
  if (params.some((p) => p.name === 'cursor')) {
    mutation.push({ weight: 2, arbitrary: forgedCursor.map((c) => set('cursor', c)) })
  }
  const mutations = fc.oneof(
    { weight: 3, arbitrary: fc.constant([]) },
    { weight: 7, arbitrary: fc.array(fc.oneof(...mutation), { minLength: 1, maxLength: 3 }) },
  )
  return fc.tuple(near, mutations).map(([pairs, changes]) => {
    const all = changes.reduce((acc, change) => change(acc), pairs)
    const text = all.map(([k, v, raw]) => (raw ? (v === '' ? k : `${k}=${v}`) : `${encode(k)}=${encode(v)}`))
    return all.length === 0 ? '' : `?${text.join('&')}`
  })
}

/** One path segment for a parameter: near-valid, or broken, or percent-encoding that does not decode. */
function paramSegment(
  param: OpenApiParameter | undefined,
  name: string,
  ctx: FuzzContext,
): fc.Arbitrary<string> {
  const schema = param?.schema ?? { type: 'string' }
  const near = valueArbitrary(schema, ctx, name).map((v) => encode(String(v)))
  return fc.oneof(
    { weight: 8, arbitrary: near },
    { weight: 6, arbitrary: badText.map(encode) },
    { weight: 2, arbitrary: fc.constantFrom(...PERCENT_JUNK, '.', '..', '%2e%2e', 'a%2F..', '%20') },
    { weight: 1, arbitrary: fc.integer({ min: 190, max: 400 }).map((n) => 'A'.repeat(n)) },
    { weight: 1, arbitrary: fc.constant('') },
  )
}

const requestId = fc.oneof(
  { weight: 7, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9._:-]{8,40}$/) },
  { weight: 2, arbitrary: headerText },
)

/**
 * Requests for one route. Throws when the route has a shape nothing here can generate for (another
 * method, a wildcard or regular-expression parameter, no OpenAPI operation), so no route escapes.
 */
export function requestArbitrary(
  route: { method: string; url: string },
  operation: OpenApiOperation | undefined,
  ctx: FuzzContext,
): fc.Arbitrary<FuzzRequest> {
  const label = `${route.method} ${route.url}`
  if (!METHODS_WITH_BODY.has(route.method) && !METHODS_WITHOUT_BODY.has(route.method)) {
    throw new Error(`no generator strategy for ${label}: method ${route.method}`)
  }
  if (!operation) throw new Error(`no generator strategy for ${label}: it is not in the OpenAPI document`)
  const method = route.method as Method
  const params = operation.parameters ?? []
  const segments = route.url
    .split('/')
    .slice(1)
    .map((segment): fc.Arbitrary<string> => {
      if (STATIC_SEGMENT.test(segment)) return fc.constant(segment)
      const name = PARAM_SEGMENT.exec(segment)?.[1]
      if (name === undefined) throw new Error(`no generator strategy for ${label}: path segment ${segment}`)
      return paramSegment(
        params.find((p) => p.in === 'path' && p.name === name),
        name,
        ctx,
      )
    })
  const headerParams = params.filter((p) => p.in === 'header')
  const headerValues = fc.record(
    Object.fromEntries(
      headerParams.map((p) => [
        p.name,
        fc.oneof(
          { weight: 4, arbitrary: fc.constant(undefined) },
          { weight: 4, arbitrary: valueArbitrary(p.schema ?? {}, ctx, p.name).map(String) },
          {
            weight: 2,
            arbitrary: fc.oneof(headerText, fc.constantFrom('""', '"', '"abc', ' ', 'é', 'x'.repeat(300))),
          },
        ),
      ]),
    ),
  )
  const jsonSchema = operation.requestBody?.content?.['application/json']?.schema
  const formSchema = operation.requestBody?.content?.[FORM_CONTENT_TYPE]?.schema
  const textType = Object.keys(operation.requestBody?.content ?? {}).find(
    (type) => type !== 'application/json' && type !== FORM_CONTENT_TYPE,
  )
  const textBody = textType === undefined ? undefined : ctx.textBodies?.[textType]
  if (textType !== undefined && textBody === undefined) {
    throw new Error(`no generator strategy for ${label}: ${textType} bodies (FuzzContext.textBodies)`)
  }
  // A form route's client authentication decides the header and some body parameters together.
  const authenticated: fc.Arbitrary<{ authorization: string | undefined; body: Body }> =
    textType !== undefined && textBody !== undefined
      ? fc.record({ authorization: ctx.authorization, body: textBodyAndType(textType, textBody) })
      : formSchema && METHODS_WITH_BODY.has(method)
        ? (
            ctx.clientAuthentication?.arbitrary ??
            ctx.authorization.map((authorization): ClientAuthentication => ({ authorization, params: [] }))
          ).chain((credentials) =>
            formBodyAndType(formSchema, jsonSchema, ctx, credentials.params).map((body) => ({
              authorization: credentials.authorization,
              body,
            })),
          )
        : fc.record({
            authorization: ctx.authorization,
            body: bodyAndType(jsonSchema, ctx, METHODS_WITH_BODY.has(method)),
          })
  return fc
    .record({
      path: fc.tuple(...segments).map((s) => `/${s.join('/')}`),
      query: queryArbitrary(
        params.filter((p) => p.in === 'query'),
        ctx,
      ),
      authenticated,
      headerValues,
      requestId,
      accept: fc.oneof(
        { weight: 8, arbitrary: fc.constant(undefined) },
        {
          weight: 1,
          arbitrary: fc.constantFrom('text/html', 'application/xml', '*/*', 'application/problem+json'),
        },
      ),
      // A Content-Length that does not match the body; rare, as it hides everything after it.
      wrongLength: fc.oneof(
        { weight: 30, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.integer({ min: -1, max: 2_000_000 }) },
      ),
    })
    .map(({ path, query, authenticated, headerValues, requestId, accept, wrongLength }) => {
      const { authorization, body } = authenticated
      const headers: Record<string, string> = {}
      for (const [k, v] of Object.entries(headerValues)) if (typeof v === 'string') headers[k] = v
      if (authorization !== undefined) headers.authorization = authorization
      if (requestId !== undefined) headers['x-request-id'] = requestId
      if (accept !== undefined) headers.accept = accept
      if (body.contentType !== undefined) headers['content-type'] = body.contentType
      if (body.payload !== undefined && wrongLength !== undefined)
        headers['content-length'] = String(wrongLength)
      const request: FuzzRequest = { method, url: path + query, headers }
      if (body.payload !== undefined) request.payload = body.payload
      // fast-check prints the counterexample: show a megabyte body by its length, not in full.
      Object.defineProperty(request, fc.toStringMethod, {
        value: () => {
          const shown = Buffer.isBuffer(request.payload)
            ? `<Buffer ${request.payload.subarray(0, 200).toString('hex')}${request.payload.length > 200 ? '…' : ''}>`
            : request.payload
          const short =
            typeof shown === 'string' && shown.length > 300
              ? `${shown.slice(0, 300)}… (${shown.length} chars)`
              : shown
          return fc.stringify({
            ...request,
            url: request.url.length > 500 ? `${request.url.slice(0, 500)}…` : request.url,
            payload: short,
          })
        },
      })
      return request
    })
}
