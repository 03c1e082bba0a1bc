/**
 * Issue 4: "Topics map to devices with wildcards", with MQTT 3.1.1 §4.7 matching; filters two
 * devices could both claim are refused up front (topic-matcher.ts says why).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  filtersOverlap,
  TopicFilterError,
  TopicMatcher,
  topicFilterProblem,
  topicFilterProblems,
  topicMatches,
} from '../../../agent/inputs/topic-matcher.js'
import { mqttDevice } from './mqtt-test-agent.js'

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

describe('TopicMatcher', () => {
  it('maps topics to the device whose filter matches, wildcards included', () => {
    const matcher = new TopicMatcher([
      mqttDevice('gate-1', 'punches/gate-1'),
      mqttDevice('plant-2', 'plant-2/+/attlog'),
      mqttDevice('canteen', 'canteen/#'),
      { id: 'serial-door', serial: { path: '/dev/null' } } as never,
    ])
    expect(matcher.match('punches/gate-1')).toBe('gate-1')
    expect(matcher.match('plant-2/reader-7/attlog')).toBe('plant-2')
    expect(matcher.match('canteen')).toBe('canteen')
    expect(matcher.match('canteen/a/b')).toBe('canteen')
    expect(matcher.match('punches/gate-2')).toBeUndefined()
    expect(matcher.routes.map((r) => r.deviceId)).toEqual(['gate-1', 'plant-2', 'canteen'])
  })

  it('refuses, with the config path of each, two devices that can claim one topic', () => {
    const devices = [
      mqttDevice('a', 'punches/+'),
      mqttDevice('b', 'punches/gate-1'),
      mqttDevice('c', 'other/x'),
      mqttDevice('d', '#'),
    ]
    const error = (() => {
      try {
        new TopicMatcher(devices)
      } catch (err) {
        return err
      }
    })()
    expect(error).toBeInstanceOf(TopicFilterError)
    const problems = (error as TopicFilterError).problems
    expect(problems.map((p) => p.path)).toEqual([
      '/devices/1/mqtt/topic', // b against a
      '/devices/3/mqtt/topic', // d against a
      '/devices/3/mqtt/topic', // d against b
      '/devices/3/mqtt/topic', // d against c
    ])
    expect(problems[0]?.message).toContain('device b')
    expect(problems[0]?.message).toContain('device a')
    expect((error as TopicFilterError).code).toBe('topic_filter_invalid')
  })

  it('refuses the same topic given to two devices, and invalid filters', () => {
    expect(topicFilterProblems([mqttDevice('a', 't/1'), mqttDevice('b', 't/1')])).toHaveLength(1)
    expect(() => new TopicMatcher([mqttDevice('a', 'x/#/y')])).toThrow(/devices\/0\/mqtt\/topic/)
  })

  it('lets a $ topic and a leading-wildcard filter live side by side (§4.7.2)', () => {
    const matcher = new TopicMatcher([mqttDevice('all', '#'), mqttDevice('dollar', '$punches/x')])
    expect(matcher.match('$punches/x')).toBe('dollar')
    expect(matcher.match('punches/x')).toBe('all')
  })

  it('knows which subscriptions would see punches', () => {
    const matcher = new TopicMatcher([mqttDevice('a', 'punches/+')])
    expect(matcher.overlapsAny('#')).toBe(true)
    expect(matcher.overlapsAny('punches/gate-1')).toBe(true)
    expect(matcher.overlapsAny('+/+')).toBe(true)
    expect(matcher.overlapsAny('commands/#')).toBe(false)
    expect(matcher.overlapsAny('$SYS/#')).toBe(false)
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
