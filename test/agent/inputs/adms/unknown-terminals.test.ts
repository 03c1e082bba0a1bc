import { describe, expect, it } from 'vitest'
import { UnknownTerminals } from '../../../../agent/inputs/adms/unknown-terminals.js'

describe('unknown terminals', () => {
  it('lists each with its address and last contact, most recent first, and logs it once an hour', () => {
    let clock = Date.parse('2026-11-26T06:00:00Z')
    const unknown = new UnknownTerminals(() => clock)
    expect(unknown.seen('AAA1', '192.168.1.20')).toBe(true)
    clock += 10_000
    expect(unknown.seen('AAA1', '192.168.1.21')).toBe(false)
    expect(unknown.seen('BBB2', '192.168.1.30')).toBe(true)
    expect(unknown.list()).toEqual([
      {
        serialNumber: 'BBB2',
        address: '192.168.1.30',
        firstSeenAt: '2026-11-26T06:00:10.000Z',
        lastSeenAt: '2026-11-26T06:00:10.000Z',
        requests: 1,
      },
      {
        serialNumber: 'AAA1',
        address: '192.168.1.21',
        firstSeenAt: '2026-11-26T06:00:00.000Z',
        lastSeenAt: '2026-11-26T06:00:10.000Z',
        requests: 2,
      },
    ])
    clock += 3600_000
    expect(unknown.seen('AAA1', '192.168.1.21')).toBe(true)
  })

  it('remembers a bounded number, forgetting the least recent, and forgets a silent one after a day', () => {
    let clock = 0
    const unknown = new UnknownTerminals(() => clock)
    for (let i = 0; i < 100; i++) {
      clock += 1
      unknown.seen(`SN${i}`, '10.0.0.1')
    }
    const listed = unknown.list()
    expect(listed).toHaveLength(64)
    expect(listed[0]?.serialNumber).toBe('SN99')
    expect(listed.at(-1)?.serialNumber).toBe('SN36')
    clock += 24 * 3600_000 + 1
    expect(unknown.list()).toEqual([])
  })
})
