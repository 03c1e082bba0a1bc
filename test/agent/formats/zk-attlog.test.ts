/**
 * ZKTeco/eSSL ATTLOG lines (docs/decisions/0028-zk-attlog-and-status-codes.md):
 * `PIN\tYYYY-MM-DD HH:mm:ss\tstatus\tverify\tworkcode...`,
 * status 0 check-in, 1 check-out, 2 break-out, 3 break-in, 4 overtime-in, 5 overtime-out. The format
 * reads the status; mapping it to IN/OUT is normalize's (tested here too, as the pair devices see).
 */
import { describe, expect, it } from 'vitest'
import { parseZkAttlog } from '../../../agent/formats/zk-attlog.js'
import { DEFAULT_STATUS_MAP } from '../../../agent/punch/normalize.js'

describe('parseZkAttlog', () => {
  it('reads PIN, local time and status, ignoring verify, workcode and what follows', () => {
    expect(parseZkAttlog('1001\t2026-11-21 09:00:05\t0\t1\t0\t0\t0')).toEqual({
      punches: [{ employeeCode: '1001', punchedAt: '2026-11-21 09:00:05', status: '0' }],
      malformed: [],
    })
  })

  it('takes PIN, time and status alone (verify and workcode are optional)', () => {
    expect(parseZkAttlog('7\t2026-11-21 18:30:00\t1').punches).toEqual([
      { employeeCode: '7', punchedAt: '2026-11-21 18:30:00', status: '1' },
    ])
  })

  it.each([
    [0, 'IN', 'check-in'],
    [1, 'OUT', 'check-out'],
    [2, 'OUT', 'break-out'],
    [3, 'IN', 'break-in'],
    [4, 'IN', 'overtime-in'],
    [5, 'OUT', 'overtime-out'],
  ])('status %i (%s, %s) is read and mapped by default', (status, type) => {
    const { punches } = parseZkAttlog(`42\t2026-11-21 09:00:00\t${status}\t15\t0`)
    expect(punches).toEqual([
      { employeeCode: '42', punchedAt: '2026-11-21 09:00:00', status: String(status) },
    ])
    expect(DEFAULT_STATUS_MAP[String(status)]).toBe(type)
  })

  it('reads a status with leading zeros as its number, so statusMap keys match', () => {
    expect(parseZkAttlog('42\t2026-11-21 09:00:00\t01').punches[0]?.status).toBe('1')
  })

  it('trims padding devices put around fields', () => {
    expect(parseZkAttlog('   42 \t 2026-11-21 09:00:00 \t 0 \t1').punches).toEqual([
      { employeeCode: '42', punchedAt: '2026-11-21 09:00:00', status: '0' },
    ])
  })

  it('reads several lines in one payload, LF or CR-LF, skipping blank ones', () => {
    const frame =
      '1\t2026-11-21 09:00:00\t0\t1\t0\r\n\r\n2\t2026-11-21 09:01:00\t1\t1\t0\n3\t2026-11-21 09:02:00\t4\n'
    expect(parseZkAttlog(frame)).toEqual({
      punches: [
        { employeeCode: '1', punchedAt: '2026-11-21 09:00:00', status: '0' },
        { employeeCode: '2', punchedAt: '2026-11-21 09:01:00', status: '1' },
        { employeeCode: '3', punchedAt: '2026-11-21 09:02:00', status: '4' },
      ],
      malformed: [],
    })
  })

  it('reports each bad line on its own, with its text, and still reads the good ones', () => {
    const frame = [
      '1\t2026-11-21 09:00:00\t0',
      '2 2026-11-21 09:01:00 1',
      '\t2026-11-21 09:01:00\t1',
      '3\t21/11/2026 09:02\t0',
      '4\t2026-11-21 09:03:00\tIN',
      '5\t2026-11-21 09:04:00\t1000',
      '6\t2026-11-21 09:05:00\t5',
    ].join('\n')
    const result = parseZkAttlog(frame)
    expect(result.punches.map((p) => p.employeeCode)).toEqual(['1', '6'])
    expect(result.malformed).toEqual([
      {
        record: '2 2026-11-21 09:01:00 1',
        error: 'expected PIN, time and status separated by tabs, got 1 field(s)',
      },
      { record: '\t2026-11-21 09:01:00\t1', error: 'the PIN is empty' },
      { record: '3\t21/11/2026 09:02\t0', error: '"21/11/2026 09:02" is not a YYYY-MM-DD HH:mm:ss time' },
      { record: '4\t2026-11-21 09:03:00\tIN', error: 'status "IN" is not a number' },
      { record: '5\t2026-11-21 09:04:00\t1000', error: 'status "1000" is not a number' },
    ])
  })

  it('reports a frame with no line at all, so an empty frame is not silently nothing', () => {
    expect(parseZkAttlog(' \r\n\n')).toEqual({
      punches: [],
      malformed: [{ record: ' \r\n\n', error: 'the frame holds no record' }],
    })
  })

  it('keeps error messages short whatever the field holds', () => {
    const { malformed } = parseZkAttlog(`1\t${'9'.repeat(5000)}\t0`)
    expect(malformed[0]?.error.length).toBeLessThan(100)
  })
})
