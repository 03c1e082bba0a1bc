import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib'

/** How a stored response body is held: JSON text, or that text compressed with Brotli, in base64. */
export type ResponseEncoding = 'json' | 'br'

export interface EncodedBody {
  encoding: ResponseEncoding
  text: string
}

// Quality 5 of 11: a 500-punch batch response (about 130 KB of JSON, each result repeating the
// same field names) shrinks about thirtyfold in about a millisecond; 11 gains little more and
// costs several times the time, on the request's own path.
const QUALITY = 5

/**
 * A response body as stored under its Idempotency-Key. Compressed (RFC 7932) and decompressed
 * exactly, so a replay is the original JSON, value for value. Base64, not bytes: one text column
 * then holds it on SQLite and PostgreSQL alike.
 */
export function encodeResponseBody(body: unknown): EncodedBody {
  const json = Buffer.from(JSON.stringify(body), 'utf8')
  const compressed = brotliCompressSync(json, {
    params: {
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_QUALITY]: QUALITY,
      [constants.BROTLI_PARAM_SIZE_HINT]: json.length,
    },
  })
  const text = compressed.toString('base64')
  // A tiny body (one punch, a small problem) may not shrink: keep it as it is.
  return text.length < json.length
    ? { encoding: 'br', text }
    : { encoding: 'json', text: json.toString('utf8') }
}

export function decodeResponseBody(encoding: string, text: string): unknown {
  if (encoding === 'json') return JSON.parse(text)
  if (encoding === 'br') return JSON.parse(brotliDecompressSync(Buffer.from(text, 'base64')).toString('utf8'))
  throw new Error(`unknown stored response encoding ${encoding}`)
}
