/**
 * Topics map to devices with wildcards, with MQTT 3.1.1 §4.7 matching; filters two
 * devices could both claim are refused up front (topic-matcher.ts says why).
 */
import { describe, expect, it } from 'vitest'
import { TopicFilterError, TopicMatcher, topicFilterProblems } from '../../../agent/inputs/topic-matcher.js'
import { mqttDevice } from './mqtt-test-agent.js'

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
