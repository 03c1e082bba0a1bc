import type { DeviceConfig } from '../config/schema.js'

/**
 * Which device a punch topic belongs to (issue 4: "Topics map to devices with wildcards"), with
 * MQTT 3.1.1 §4.7 semantics: `+` is exactly one level (possibly empty), `#` is the rest of the topic
 * including its parent level, and a topic starting with `$` is never matched by a filter whose first
 * level is a wildcard (§4.7.2). One topic must belong to one device: filters that a single topic
 * could match both of are refused when the matcher is built, since picking one silently would file
 * one device's punches under another's id (and into its punch ids, DESIGN.md §5).
 */

/** Where in the configuration a filter is wrong, and why (reported like other config errors). */
export interface TopicFilterProblem {
  path: string
  message: string
}

export class TopicFilterError extends Error {
  readonly code = 'topic_filter_invalid'

  constructor(readonly problems: readonly TopicFilterProblem[]) {
    super(`MQTT device topics: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`)
    this.name = 'TopicFilterError'
  }
}

export interface TopicRoute {
  deviceId: string
  filter: string
}

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

function levelsMatch(filter: readonly string[], topic: readonly string[]): boolean {
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

/** Every problem with the MQTT device topics of a configuration, with its config path. */
export function topicFilterProblems(devices: readonly DeviceConfig[]): TopicFilterProblem[] {
  const problems: TopicFilterProblem[] = []
  const valid: { index: number; id: string; filter: string }[] = []
  for (const [index, device] of devices.entries()) {
    const filter = device.mqtt?.topic
    if (filter === undefined) continue
    const problem = topicFilterProblem(filter)
    if (problem) problems.push({ path: `/devices/${index}/mqtt/topic`, message: problem })
    else valid.push({ index, id: device.id, filter })
  }
  for (const [n, a] of valid.entries()) {
    for (const b of valid.slice(n + 1)) {
      if (filtersOverlap(a.filter, b.filter)) {
        problems.push({
          path: `/devices/${b.index}/mqtt/topic`,
          message: `"${b.filter}" (device ${b.id}) and "${a.filter}" (device ${a.id}) can match the same topic; each topic must belong to one device`,
        })
      }
    }
  }
  return problems
}

/** The device of a topic. Build it once per input; `match` is on every PUBLISH. */
export class TopicMatcher {
  private readonly exact = new Map<string, string>()
  private readonly wildcard: { deviceId: string; levels: string[] }[] = []
  readonly routes: readonly TopicRoute[]

  /** Throws a TopicFilterError when a filter is invalid or two devices' filters overlap. */
  constructor(devices: readonly DeviceConfig[]) {
    const problems = topicFilterProblems(devices)
    if (problems.length > 0) throw new TopicFilterError(problems)
    const routes: TopicRoute[] = []
    for (const device of devices) {
      const filter = device.mqtt?.topic
      if (filter === undefined) continue
      routes.push({ deviceId: device.id, filter })
      if (filter.includes('+') || filter.includes('#'))
        this.wildcard.push({ deviceId: device.id, levels: filter.split('/') })
      else this.exact.set(filter, device.id)
    }
    this.routes = routes
  }

  /** The device whose filter matches `topic`; undefined when none does. */
  match(topic: string): string | undefined {
    const exact = this.exact.get(topic)
    if (exact !== undefined) return exact
    if (this.wildcard.length === 0) return undefined
    const levels = topic.split('/')
    // Filters never overlap (checked above), so the first match is the only one.
    return this.wildcard.find((route) => levelsMatch(route.levels, levels))?.deviceId
  }

  /** Whether `filter` could match any device's topic (a subscription that would see punches). */
  overlapsAny(filter: string): boolean {
    return this.routes.some((route) => filtersOverlap(route.filter, filter))
  }
}
