/**
 * The pieces of the ADMS device model that read and write protocol text: the handshake's TimeZone
 * and options, ATTLOG lines, `C:<id>:<command>` lines and what each command answers.
 */
import { describe, expect, it } from 'vitest'
import { formatAttlogLine, parseAttlogLine } from '../../../agent/simulator/adms-attlog.js'
import { parseAdmsCommands } from '../../../agent/simulator/adms-commands.js'
import { parseAdmsServerOptions } from '../../../agent/simulator/adms-server-options.js'
import { formatWallTime, parseAdmsTimeZone } from '../../../agent/simulator/adms-wall-clock.js'

describe('parseAdmsTimeZone', () => {
  it('reads whole hours as hours and anything larger as minutes', () => {
    const read = (text: string) => parseAdmsTimeZone(text)
    expect(['0', '8', '-5', '+3', '14', '-12'].map(read)).toEqual([0, 480, -300, 180, 840, -720])
    expect(['330', '345', '-210', '570', '840', '-720'].map(read)).toEqual([330, 345, -210, 570, 840, -720])
  })

  it('refuses what is no zone', () => {
    for (const text of ['', 'IST', '5.5', '+05:30', '900', '-841', '99999'])
      expect(parseAdmsTimeZone(text)).toBe(undefined)
  })
})

describe('formatWallTime', () => {
  it('writes UTC plus a fixed offset, across a date line', () => {
    const at = Date.parse('2026-12-31T20:00:00Z')
    expect(formatWallTime(at, 330)).toBe('2027-01-01 01:30:00')
    expect(formatWallTime(at, -210)).toBe('2026-12-31 16:30:00')
    expect(formatWallTime(at, 0)).toBe('2026-12-31 20:00:00')
  })
})

describe('parseAdmsServerOptions', () => {
  it('keeps firmware defaults for what is missing, and never a delay below a second', () => {
    expect(parseAdmsServerOptions('GET OPTION FROM: X\n')).toMatchObject({
      attLogStamp: 0,
      errorDelaySeconds: 30,
      delaySeconds: 10,
      transIntervalMinutes: 1,
      realtime: true,
      timeZoneMinutes: undefined,
    })
    expect(parseAdmsServerOptions('Delay=0\nErrorDelay=soon\nRealtime=0')).toMatchObject({
      delaySeconds: 1,
      errorDelaySeconds: 30,
      realtime: false,
    })
  })

  it('reads ATTLOGStamp None, 0 or anything not a number as "upload everything"', () => {
    for (const stamp of ['None', '0', '', '-5', 'abc', '99999999999999999999'])
      expect(parseAdmsServerOptions(`ATTLOGStamp=${stamp}`).attLogStamp).toBe(0)
    expect(parseAdmsServerOptions('ATTLOGStamp=1772323200005').attLogStamp).toBe(1772323200005)
  })
})

describe('ATTLOG lines', () => {
  const fields = { pin: '7', time: '2026-11-21 09:00:00', status: 1, verify: 15, workcode: 0 }

  it('writes 5, 7, 9 or 12 fields; TimeOffset is the zone in seconds, signed', () => {
    expect(formatAttlogLine(fields, 5, 330)).toBe('7\t2026-11-21 09:00:00\t1\t15\t0')
    expect(formatAttlogLine(fields, 7, 330)).toBe('7\t2026-11-21 09:00:00\t1\t15\t0\t0\t0')
    expect(formatAttlogLine(fields, 9, 330).split('\t')).toHaveLength(9)
    expect(formatAttlogLine(fields, 12, -210).split('\t')[10]).toBe('-12600')
    expect(formatAttlogLine(fields, 12, 0).split('\t')[10]).toBe('+0')
  })

  it('reads the simulator’s lines, with defaults for missing fields, and refuses what is not one', () => {
    expect(parseAttlogLine('E001\t2026-11-21 18:05:09\t1\t1\t0')).toEqual({
      pin: 'E001',
      time: '2026-11-21 18:05:09',
      status: 1,
      verify: 1,
      workcode: 0,
    })
    expect(parseAttlogLine('9\t2026-11-21 18:05:09\n')).toMatchObject({ status: 0, verify: 1, workcode: 0 })
    expect(() => parseAttlogLine('E001,2026-11-21 18:05:09,1')).toThrow(TypeError)
    expect(() => parseAttlogLine('E001\t2026-11-21T18:05:09')).toThrow(TypeError)
    expect(() => parseAttlogLine('E001\t2026-11-21 18:05:09\tIN')).toThrow(/status "IN"/)
  })
})

describe('parseAdmsCommands', () => {
  it('reads C:<id>:<command> lines, LF or CRLF; OK alone is no command', () => {
    expect(parseAdmsCommands('OK')).toEqual({ commands: [], ignored: [] })
    expect(parseAdmsCommands('C:1:INFO\r\nC:ab12:DATA QUERY ATTLOG StartTime=a\tEndTime=b\r\n')).toEqual({
      commands: [
        { id: '1', command: 'INFO' },
        { id: 'ab12', command: 'DATA QUERY ATTLOG StartTime=a\tEndTime=b' },
      ],
      ignored: [],
    })
  })

  it('ignores lines it cannot answer: no id, an id of more than 16 characters or not alphanumeric', () => {
    const { commands, ignored } = parseAdmsCommands('C::INFO\nC:12345678901234567:INFO\nC:a-b:INFO\nhello')
    expect(commands).toEqual([])
    expect(ignored).toHaveLength(4)
  })
})
