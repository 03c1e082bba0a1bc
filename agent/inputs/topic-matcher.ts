import type { DeviceConfig } from '../config/schema.js'
import { filtersOverlap, levelsMatch, topicFilterProblem } from '../config/topic-filter.js'

/**
 * Which device a punch topic belongs to, by topic filters with wildcards, with
 * MQTT 3.1.1 §4.7 semantics: `+` is exactly one level (possibly empty), `#` is the rest of the topic
 * including its parent level, and a topic starting with `$` is never matched by a filter whose first
 * level is a wildcard (§4.7.2). One topic must belong to one device: filters that a single topic
 * could match both of are refused when the matcher is built, since picking one silently would file
 * one device's punches under another's id (and into its punch ids, docs/decisions/0025-punch-id.md).
 */

/** Where in the configuration a filter is wrong, and why (reported like other config errors). */
interface TopicFilterProblem {
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

interface TopicRoute {
  deviceId: string
  filter: string
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
