import { parseTimestamp } from '../../shared/time.js'
import { AppError } from '../app-error.js'

/**
 * A listing's `from` or `to` filter in µs, checked here too: the HTTP schema checks it before, but
 * the CLI calls the services directly, and a time that did not parse must be refused, not dropped
 * (the list would be unfiltered).
 */
export function timeFilter(name: 'from' | 'to', text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  const us = parseTimestamp(text)
  if (us === undefined) {
    throw new AppError('validation_failed', `${name}: must be an RFC 3339 time with an offset`, {
      errors: [{ in: 'query', pointer: `#/${name}`, message: 'must be an RFC 3339 time with an offset' }],
    })
  }
  return us
}
