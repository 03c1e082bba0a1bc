import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { AppError } from '../app-error.js'
import { duplicateJsonName } from './duplicate-json-name.js'

/** Deeper than any request of ours; deep enough to be sure it is not a mistake. */
const MAX_JSON_DEPTH = 32

/**
 * Whether `text` nests arrays and objects deeper than `limit`. One linear pass that skips strings
 * and stops at the first level too deep, so a hostile body costs no more than its length.
 */
function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c)
        i++ // backslash: skip the escaped character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return false
}

/**
 * Request bodies are JSON and nothing else: any other media type is a 415 (Fastify would also take
 * text/plain). JSON is parsed as Fastify does (prototype poisoning refused), but nesting deeper than
 * MAX_JSON_DEPTH is a 400 before parsing: later code that walks a body (validation, fingerprints
 * for Idempotency-Key) would otherwise recurse until the stack runs out (found by fuzzing). A
 * member named twice in one object is a 400 too (RFC 8259 §4), rather than the last one silently
 * winning: one body must not say two things to two readers.
 */
const jsonBodyPlugin: FastifyPluginAsync = async (app) => {
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (jsonDepthExceeds(body as string, MAX_JSON_DEPTH)) {
      done(new AppError('malformed_json', `The body nests deeper than ${MAX_JSON_DEPTH} levels.`), undefined)
      return
    }
    parse(request, body as string, (err, value) => {
      if (err) return done(err, undefined)
      const name = duplicateJsonName(body as string)
      if (name === undefined) return done(null, value)
      const shown = JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name)
      done(
        new AppError('malformed_json', `The body names the member ${shown} twice in one object.`),
        undefined,
      )
    })
  })
}

export default fp(jsonBodyPlugin, { name: 'hajri-json-body' })
