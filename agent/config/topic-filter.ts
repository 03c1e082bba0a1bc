/**
 * MQTT 3.1.1 §4.7 topic filters: whether one is valid, which topics it matches, and whether two can
 * match the same topic. The configuration check refuses a filter the broker would refuse when it
 * starts, so both read filters with these functions.
 */

/** Why a topic filter is not valid MQTT (§4.7.1, §4.7.3), or undefined. */
export function topicFilterProblem(filter: string): string | undefined {
  if (filter.length === 0) return 'must not be empty (MQTT 3.1.1 §4.7.3)'
  if (Buffer.byteLength(filter, 'utf8') > 65_535) return 'must be at most 65535 bytes (MQTT 3.1.1 §4.7.3)'
  if (filter.includes('\u0000')) return 'must not contain a NUL character (MQTT 3.1.1 §4.7.3)'
  const levels = filter.split('/')
  for (const [i, level] of levels.entries()) {
    // §4.7.1.2: '#' stands alone in the last level; §4.7.1.3: '+' stands alone in its level.
    if (level.includes('#') && (level !== '#' || i !== levels.length - 1))
      return 'is not a topic filter: # must be a whole level and the last one (MQTT 3.1.1 §4.7.1.2)'
    if (level.includes('+') && level !== '+') {
      return 'is not a topic filter: + must be a whole level, e.g. punches/+ (MQTT 3.1.1 §4.7.1.3)'
    }
  }
  return undefined
}

const isWildcard = (level: string | undefined) => level === '+' || level === '#'

/** §4.7.2: a filter starting with a wildcard never matches a `$` topic (e.g. $SYS/...). */
function dollarExcluded(filterFirst: string | undefined, topicFirst: string | undefined): boolean {
  return isWildcard(filterFirst) && topicFirst?.startsWith('$') === true
}

/** Whether `topic` (a topic name, no wildcards) matches `filter` (§4.7.1). */
export function topicMatches(filter: string, topic: string): boolean {
  return levelsMatch(filter.split('/'), topic.split('/'))
}

/** topicMatches on levels split already: a matcher splits its filters once, not per topic. */
export function levelsMatch(filter: readonly string[], topic: readonly string[]): boolean {
  if (dollarExcluded(filter[0], topic[0])) return false
  for (let i = 0; i < filter.length; i++) {
    const level = filter[i]
    // §4.7.1.2: "sport/#" also matches "sport", so '#' matches even when the topic has ended.
    if (level === '#') return true
    if (i >= topic.length) return false
    if (level !== '+' && level !== topic[i]) return false
  }
  return filter.length === topic.length
}

/** Whether some topic name matches both filters. */
export function filtersOverlap(a: string, b: string): boolean {
  const x = a.split('/')
  const y = b.split('/')
  if (dollarExcluded(x[0], y[0]) || dollarExcluded(y[0], x[0])) return false
  for (let i = 0; ; i++) {
    const p = x[i]
    const q = y[i]
    if (p === undefined && q === undefined) return true
    if (p === '#' || q === '#') return true
    if (p === undefined || q === undefined) return false
    if (p === '+' || q === '+') continue
    if (p !== q) return false
  }
}
