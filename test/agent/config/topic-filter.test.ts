/** MQTT 3.1.1 §4.7 topic filters, as the configuration check and the broker's inputs read them. */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { filtersOverlap, topicFilterProblem, topicMatches } from '../../../agent/config/topic-filter.js'

describe('topicMatches (MQTT 3.1.1 §4.7)', () => {
  it.each([
    ['punches/gate-1', 'punches/gate-1', true],
    ['punches/gate-1', 'punches/gate-2', false],
    ['punches/+', 'punches/gate-1', true],
    ['punches/+', 'punches/gate-1/extra', false],
    ['punches/+', 'punches', false],
    ['punches/+', 'punches/', true], // '+' matches an empty level
    ['+/+', '/finance', true], // §4.7.1.3 example
    ['/+', '/finance', true],
    ['+', '/finance', false],
    ['punches/#', 'punches', true], // §4.7.1.2: '#' includes the parent level
    ['punches/#', 'punches/a/b/c', true],
    ['punches/#', 'punchesX/a', false],
    ['#', 'anything/at/all', true],
    ['site/+/punch', 'site/gate-1/punch', true],
    ['site/+/punch', 'site/gate-1/other', false],
    ['Punches/a', 'punches/a', false], // case-sensitive, §4.7.3
  ])('%s against %s: %s', (filter, topic, expected) => {
    expect(topicMatches(filter, topic)).toBe(expected)
  })

  it('never matches a $ topic with a leading wildcard, but does with a literal $ level (§4.7.2)', () => {
    expect(topicMatches('#', '$SYS/broker/uptime')).toBe(false)
    expect(topicMatches('+/monitor/Clients', '$SYS/monitor/Clients')).toBe(false)
    expect(topicMatches('$SYS/#', '$SYS/monitor/Clients')).toBe(true)
    expect(topicMatches('$SYS/monitor/+', '$SYS/monitor/Clients')).toBe(true)
  })
})

describe('topicFilterProblem', () => {
  it.each([
    ['punches/#/more', '# must be a whole level and the last one'],
    ['punches/gate#', '# must be a whole level and the last one'],
    ['punches/gate+', '+ must be a whole level'],
    ['', 'must not be empty'],
    ['a\u0000b', 'NUL character'],
  ])('refuses %j', (filter, message) => {
    expect(topicFilterProblem(filter)).toContain(message)
  })

  it.each(['#', '+', 'a/+/b', 'a/#', '/', '$SYS/#', 'a//b'])('accepts %j', (filter) => {
    expect(topicFilterProblem(filter)).toBeUndefined()
  })
})

describe('filtersOverlap', () => {
  // Small alphabets make a brute-force search over every topic a complete check: a witness topic,
  // if there is one, has no more levels than the longer filter, and each level is one of the
  // filters' literals or something else ('z').
  const literal = fc.constantFrom('a', 'b', '$x', '')
  const filterArb = fc
    .tuple(fc.array(fc.oneof(literal, fc.constant('+')), { minLength: 1, maxLength: 3 }), fc.boolean())
    .map(([levels, hash]) => (hash ? [...levels, '#'] : levels).join('/'))
    .filter((f) => topicFilterProblem(f) === undefined)
  const topicLevels = ['a', 'b', '$x', '', 'z']

  function* topics(maxLevels: number): Generator<string> {
    for (let n = 1; n <= maxLevels; n++) {
      const walk = function* (prefix: string[]): Generator<string> {
        if (prefix.length === n) {
          yield prefix.join('/')
          return
        }
        for (const level of topicLevels) yield* walk([...prefix, level])
      }
      yield* walk([])
    }
  }

  it('is true exactly when some topic matches both filters', () => {
    fc.assert(
      fc.property(filterArb, filterArb, (a, b) => {
        const maxLevels = Math.max(a.split('/').length, b.split('/').length)
        let witness = false
        for (const topic of topics(maxLevels)) {
          if (topicMatches(a, topic) && topicMatches(b, topic)) {
            witness = true
            break
          }
        }
        expect(filtersOverlap(a, b)).toBe(witness)
        expect(filtersOverlap(b, a)).toBe(witness)
      }),
      { numRuns: 500 },
    )
  })
})
