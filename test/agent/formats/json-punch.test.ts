/**
 * JSON punches (docs/decisions/0030-mqtt-json-payload.md):
 * `{"employeeCode": "E001", "punchType": "IN", "punchedAt": "..."}`;
 * `status` may stand for punchType; punchedAt may be RFC 3339, local time, or absent. A frame holds
 * one object, an array, or (serial) JSON lines. Other fields are ignored: devices add their own.
 */
import { describe, expect, it } from 'vitest'
import { parseJsonPunches } from '../../../agent/formats/json-punch.js'

describe('parseJsonPunches', () => {
  it('reads the MQTT JSON payload', () => {
    expect(
      parseJsonPunches(
        '{"employeeCode": "E001", "punchType": "IN", "punchedAt": "2026-11-21T09:00:00+05:30"}',
      ),
    ).toEqual({
      punches: [{ employeeCode: 'E001', punchType: 'IN', punchedAt: '2026-11-21T09:00:00+05:30' }],
      malformed: [],
    })
  })

  it('reads an array of punches', () => {
    const frame = JSON.stringify([
      { employeeCode: 'E1', punchType: 'IN' },
      { employeeCode: 'E2', punchType: 'OUT', punchedAt: '2026-11-21 18:00:00' },
    ])
    expect(parseJsonPunches(frame).punches).toEqual([
      { employeeCode: 'E1', punchType: 'IN' },
      { employeeCode: 'E2', punchType: 'OUT', punchedAt: '2026-11-21 18:00:00' },
    ])
  })

  it('reads JSON lines, LF or CR-LF, and reports a bad line on its own', () => {
    const frame =
      '{"employeeCode":"E1","status":0}\r\n\n{"employeeCode":"E2","status":"1"}\nnot json\n[{"employeeCode":"E3","punchType":"out"}]'
    expect(parseJsonPunches(frame)).toEqual({
      punches: [
        { employeeCode: 'E1', status: '0' },
        { employeeCode: 'E2', status: '1' },
        { employeeCode: 'E3', punchType: 'OUT' },
      ],
      malformed: [{ record: 'not json', error: 'not JSON' }],
    })
  })

  it('takes status as a number or a numeric string, read as its number', () => {
    expect(
      parseJsonPunches('[{"employeeCode":"E1","status":4},{"employeeCode":"E1","status":"05"}]').punches,
    ).toEqual([
      { employeeCode: 'E1', status: '4' },
      { employeeCode: 'E1', status: '5' },
    ])
  })

  it('takes a whole-number employee code, a lower-case punch type, and a null punchedAt', () => {
    expect(parseJsonPunches('{"employeeCode": 1042, "punchType": "in", "punchedAt": null}').punches).toEqual([
      { employeeCode: '1042', punchType: 'IN' },
    ])
  })

  it('ignores fields it does not know', () => {
    expect(
      parseJsonPunches(
        '{"employeeCode":"E1","punchType":"IN","deviceSn":"CQZ7","verify":"finger","temp":36.6}',
      ),
    ).toEqual({ punches: [{ employeeCode: 'E1', punchType: 'IN' }], malformed: [] })
  })

  it.each([
    ['{"punchType":"IN"}', 'employeeCode must be a non-empty string'],
    ['{"employeeCode":"  ","punchType":"IN"}', 'employeeCode must be a non-empty string'],
    ['{"employeeCode":1.5,"punchType":"IN"}', 'employeeCode must be a non-empty string'],
    ['{"employeeCode":true,"punchType":"IN"}', 'employeeCode must be a non-empty string'],
    ['{"employeeCode":["E1"],"punchType":"IN"}', 'employeeCode must be a non-empty string'],
    ['{"employeeCode":"E1","punchType":"SIDEWAYS"}', 'punchType must be IN or OUT'],
    ['{"employeeCode":"E1","punchType":1}', 'punchType must be IN or OUT'],
    ['{"employeeCode":"E1","status":-1}', 'status must be a small whole number'],
    ['{"employeeCode":"E1","status":1.5}', 'status must be a small whole number'],
    ['{"employeeCode":"E1","status":"one"}', 'status must be a small whole number'],
    ['{"employeeCode":"E1","status":1000}', 'status must be a small whole number'],
    ['{"employeeCode":"E1","status":null}', 'status must be a small whole number'],
    ['{"employeeCode":"E1","punchType":"IN","punchedAt":1732170000}', 'punchedAt must be a string'],
    ['"E1"', 'a punch must be a JSON object'],
    ['null', 'a punch must be a JSON object'],
    ['[[{"employeeCode":"E1"}]]', 'a punch must be a JSON object'],
  ])('reports %s as malformed: %s', (frame, error) => {
    const result = parseJsonPunches(frame)
    expect(result.punches).toEqual([])
    expect(result.malformed).toHaveLength(1)
    expect(result.malformed[0]?.error).toBe(error)
  })

  it('reports each bad element of an array with its own text, and reads the good ones', () => {
    const result = parseJsonPunches('[{"employeeCode":"E1","punchType":"IN"},{"employeeCode":""},7]')
    expect(result.punches).toEqual([{ employeeCode: 'E1', punchType: 'IN' }])
    expect(result.malformed).toEqual([
      { record: '{"employeeCode":""}', error: 'employeeCode must be a non-empty string' },
      { record: '7', error: 'a punch must be a JSON object' },
    ])
  })

  it('reports an empty array, an empty frame and truncated JSON', () => {
    expect(parseJsonPunches('[]').malformed).toEqual([{ record: '[]', error: 'an empty array' }])
    expect(parseJsonPunches('').malformed).toEqual([{ record: '', error: 'not JSON' }])
    expect(parseJsonPunches('{"employeeCode":"E1"').malformed).toEqual([
      { record: '{"employeeCode":"E1"', error: 'not JSON' },
    ])
  })

  it('reports nesting too deep to print back as malformed instead of throwing', () => {
    // JSON.parse takes it; JSON.stringify of the record overflowed the stack (a defect, fixed).
    for (const frame of [
      '['.repeat(50_000) + ']'.repeat(50_000),
      `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`,
    ]) {
      const result = parseJsonPunches(frame)
      expect(result.punches).toEqual([])
      expect(result.malformed).toHaveLength(1)
      expect(result.malformed[0]?.record).toBe(frame)
    }
  })
})
