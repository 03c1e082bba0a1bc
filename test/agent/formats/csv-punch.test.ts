/**
 * CSV records with a configurable column map (docs/decisions/0023-agent-yaml-configuration.md), read with
 * csv-parse: the device's delimiter, RFC 4180 quotes, one record per line.
 */
import { describe, expect, it } from 'vitest'
import { csvPunchParser } from '../../../agent/formats/csv-punch.js'

describe('csvPunchParser', () => {
  it('reads the columns the map names, in any order, ignoring the rest', () => {
    const parse = csvPunchParser({ employeeCode: 2, punchedAt: 0, punchType: 3 })
    expect(parse('2026-11-21 09:00:00,gate-1,E001,IN,finger')).toEqual({
      punches: [{ employeeCode: 'E001', punchedAt: '2026-11-21 09:00:00', punchType: 'IN' }],
      malformed: [],
    })
  })

  it('reads a status column as its number, for the statusMap', () => {
    const parse = csvPunchParser({ employeeCode: 0, punchedAt: 1, status: 2 })
    expect(parse('E1,2026-11-21 09:00:00,01').punches).toEqual([
      { employeeCode: 'E1', punchedAt: '2026-11-21 09:00:00', status: '1' },
    ])
  })

  it('uses the configured delimiter', () => {
    const parse = csvPunchParser({ employeeCode: 0, punchedAt: 1, punchType: 2 }, ';')
    expect(parse('E1;2026-11-21 09:00:00;out').punches).toEqual([
      { employeeCode: 'E1', punchedAt: '2026-11-21 09:00:00', punchType: 'OUT' },
    ])
    expect(csvPunchParser({ employeeCode: 0, punchType: 1 }, '\t')('E2\tIN').punches).toEqual([
      { employeeCode: 'E2', punchType: 'IN' },
    ])
  })

  it('honours quotes: a quoted delimiter, doubled quotes, padding trimmed', () => {
    const parse = csvPunchParser({ employeeCode: 1, punchedAt: 2, punchType: 0 })
    expect(parse('"IN", " E1 ","2026-11-21 09:00:00"').malformed).toHaveLength(1)
    expect(parse('IN,"E,1","2026-11-21 09:00:00"').punches).toEqual([
      { employeeCode: 'E,1', punchedAt: '2026-11-21 09:00:00', punchType: 'IN' },
    ])
    expect(parse('OUT,"E""2",2026-11-21 09:00:00').punches[0]?.employeeCode).toBe('E"2')
    expect(parse('OUT,  E3  ,2026-11-21 09:00:00').punches[0]?.employeeCode).toBe('E3')
  })

  it('reads one record per line, LF, CR-LF or a lone CR, skipping blank lines', () => {
    const parse = csvPunchParser({ employeeCode: 0, punchType: 1 })
    expect(parse('E1,IN\r\n\nE2,OUT\rE3,IN\n').punches.map((p) => p.employeeCode)).toEqual(['E1', 'E2', 'E3'])
  })

  it('reports each bad line with its text and reads the good ones', () => {
    const parse = csvPunchParser({ employeeCode: 0, punchedAt: 1, punchType: 2 })
    const result = parse(
      [
        'E1,2026-11-21 09:00:00,IN',
        '"E2,2026-11-21 09:00:00,IN',
        ',2026-11-21 09:00:00,IN',
        'E4,2026-11-21 09:00:00,SIDEWAYS',
        'E5,2026-11-21 09:00:00',
        'E6,2026-11-21 09:00:00,OUT',
      ].join('\n'),
    )
    expect(result.punches.map((p) => p.employeeCode)).toEqual(['E1', 'E6'])
    expect(result.malformed.map((m) => m.record)).toEqual([
      '"E2,2026-11-21 09:00:00,IN',
      ',2026-11-21 09:00:00,IN',
      'E4,2026-11-21 09:00:00,SIDEWAYS',
      'E5,2026-11-21 09:00:00',
    ])
    expect(result.malformed[0]?.error).toMatch(/^not a CSV record \(Quote Not Closed/)
    expect(result.malformed.slice(1).map((m) => m.error)).toEqual([
      'no employee code in column 0',
      'punch type "SIDEWAYS" is not IN or OUT',
      'the record has 2 field(s); the column map reads column 2',
    ])
  })

  it('reports a record cut short instead of giving it the receipt time', () => {
    // Before the fix "E1" became a punch with no time: with a fixed punchType it was spooled at the
    // time it was received, though the device said nothing of when.
    const parse = csvPunchParser({ employeeCode: 0, punchedAt: 1 })
    expect(parse('E1')).toEqual({
      punches: [],
      malformed: [{ record: 'E1', error: 'the record has 1 field(s); the column map reads column 1' }],
    })
    expect(parse('E1,').punches).toEqual([{ employeeCode: 'E1' }])
  })

  it('reports a frame with no record', () => {
    expect(csvPunchParser({ employeeCode: 0 })('\r\n').malformed).toEqual([
      { record: '\r\n', error: 'the frame holds no record' },
    ])
  })
})
