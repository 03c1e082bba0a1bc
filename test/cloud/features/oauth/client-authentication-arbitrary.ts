/**
 * fast-check arbitraries for OAuth client authentication (RFC 6749 §2.3.1), for fuzzing the OAuth
 * endpoints: valid Basic and body credentials often enough that the handlers run, and every way
 * clients and attackers get them wrong: no encoding, bad %-escapes, broken base64, no colon, both
 * methods at once, huge ids, credentials of a revoked app.
 */
import fc from 'fast-check'
import {
  type ClientAuthentication,
  type ClientAuthenticationStrategy,
  formEncode,
  headerText,
} from '../../../support/request-arbitrary.js'

export interface FuzzClient {
  clientId: string
  clientSecret: string
}

const base64 = (text: string | Uint8Array) => Buffer.from(text).toString('base64')
const basicOf = (userPass: string | Uint8Array) => `Basic ${base64(userPass)}`
/** RFC 6749 §2.3.1: each half form-encoded, then joined and base64-encoded. */
const basic = (id: string, secret: string) => basicOf(`${formEncode(id)}:${formEncode(secret)}`)

const header = (authorization: string | undefined): ClientAuthentication => ({ authorization, params: [] })
const inBody = (...params: [string, string][]): ClientAuthentication => ({ authorization: undefined, params })

/**
 * Client authentication for the OAuth endpoints. `clients` authenticate; `refused` look like
 * clients but must not (a revoked app, a rotated-out secret); `bearer` are other credentials that
 * a confused client might send instead.
 */
export function clientAuthenticationArbitrary(options: {
  clients: FuzzClient[]
  refused: FuzzClient[]
  bearer: string[]
}): ClientAuthenticationStrategy {
  const client = fc.constantFrom(...options.clients)
  const anyClient = fc.constantFrom(...options.clients, ...options.refused)
  const hugeId = fc.constantFrom(128, 129, 1024, 1025, 5000).map((n) => 'c'.repeat(n))
  const oddText = fc.oneof(
    headerText,
    fc.constantFrom('', ' ', '\u0000', 'a\u0000b', 'é', '😀', '\ud800', '%', '+', ':', 'hjc_', 'hjs_'),
  )

  const valid = fc.oneof(
    { weight: 6, arbitrary: client.map((c) => header(basic(c.clientId, c.clientSecret))) },
    {
      weight: 3,
      arbitrary: client.map((c) => inBody(['client_id', c.clientId], ['client_secret', c.clientSecret])),
    },
    {
      // %20 for a space instead of "+", and the scheme in other cases: the same credentials.
      weight: 1,
      arbitrary: fc
        .tuple(client, fc.constantFrom('Basic ', 'basic ', 'BASIC ', 'Basic   '))
        .map(([c, scheme]) =>
          header(
            `${scheme}${base64(`${encodeURIComponent(c.clientId)}:${encodeURIComponent(c.clientSecret)}`)}`,
          ),
        ),
    },
    {
      // RFC 6749 §3.2.1: a client may name itself in the body as well.
      weight: 1,
      arbitrary: client.map((c) => ({
        authorization: basic(c.clientId, c.clientSecret),
        params: [['client_id', c.clientId]] as [string, string][],
      })),
    },
  )

  const wrongBasic = fc.oneof(
    // Not form-encoded: right for plain ids, wrong for ids with reserved characters.
    anyClient.map((c) => header(basicOf(`${c.clientId}:${c.clientSecret}`))),
    anyClient.map((c) => header(basic(c.clientId, c.clientSecret))),
    fc.tuple(client, oddText).map(([c, s]) => header(basic(c.clientId, s))),
    fc.tuple(oddText, client).map(([id, c]) => header(basic(id, c.clientSecret))),
    fc.tuple(hugeId, client).map(([id, c]) => header(basic(id, c.clientSecret))),
    client.map((c) => header(basicOf(`${formEncode(c.clientId)}${formEncode(c.clientSecret)}`))),
    // Broken %-escapes in either half: they do not decode.
    fc
      .tuple(client, fc.constantFrom('%', '%zz', '%E0%A4', '%C0%AF', '%00', '%ED%A0%80', '%FF'))
      .chain(([c, junk]) =>
        fc.constantFrom(
          header(basicOf(`${formEncode(c.clientId)}${junk}:${formEncode(c.clientSecret)}`)),
          header(basicOf(`${formEncode(c.clientId)}:${formEncode(c.clientSecret)}${junk}`)),
          header(basicOf(`${junk}:${junk}`)),
        ),
      ),
    // Not base64, or base64 of bytes that are not UTF-8.
    fc.uint8Array({ maxLength: 64 }).map((bytes) => header(basicOf(bytes))),
    fc
      .constantFrom(
        'Basic',
        'Basic ',
        'Basic ===',
        'Basic a',
        'Basic ab$c',
        'Basic YQ',
        'Basic Y W J j',
        '',
        ' ',
      )
      .map(header),
    fc.tuple(client, headerText).map(([c, junk]) => header(`${basic(c.clientId, c.clientSecret)}${junk}`)),
    fc.constantFrom(...options.bearer).map((b) => header(`Bearer ${b}`)),
    fc
      .tuple(client, fc.constantFrom('Digest ', 'Token ', 'Bearer '))
      .map(([c, scheme]) => header(`${scheme}${c.clientSecret}`)),
  )

  const wrongBody = fc.oneof(
    anyClient.map((c) => inBody(['client_id', c.clientId], ['client_secret', c.clientSecret])),
    client.map((c) => inBody(['client_id', c.clientId])),
    client.map((c) => inBody(['client_secret', c.clientSecret])),
    fc.tuple(client, oddText).map(([c, s]) => inBody(['client_id', c.clientId], ['client_secret', s])),
    fc.tuple(oddText, client).map(([id, c]) => inBody(['client_id', id], ['client_secret', c.clientSecret])),
    fc.tuple(hugeId, client).map(([id, c]) => inBody(['client_id', id], ['client_secret', c.clientSecret])),
    // RFC 6749 §3.2: repeated.
    client.map((c) =>
      inBody(['client_id', c.clientId], ['client_id', c.clientId], ['client_secret', c.clientSecret]),
    ),
  )

  // RFC 6749 §2.3: two methods at once, or the body naming another client than the header.
  const both = fc.tuple(client, anyClient).map(([c, other]) => ({
    authorization: basic(c.clientId, c.clientSecret),
    params: [
      ['client_id', other.clientId],
      ['client_secret', other.clientSecret],
    ] as [string, string][],
  }))

  return {
    fields: ['client_id', 'client_secret'],
    arbitrary: fc.oneof(
      { weight: 12, arbitrary: valid },
      { weight: 6, arbitrary: wrongBasic },
      { weight: 3, arbitrary: wrongBody },
      { weight: 1, arbitrary: both },
      { weight: 1, arbitrary: fc.constant(header(undefined)) },
    ),
  }
}
