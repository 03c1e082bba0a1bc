import { describe, expect, it } from 'vitest'
import { addressMatcher, parseAddressRange } from '../../../agent/config/address-range.js'

describe('address lists', () => {
  it('read addresses and CIDR subnets, IPv4 and IPv6', () => {
    expect(parseAddressRange('192.168.10.25')).toEqual({
      address: '192.168.10.25',
      family: 'ipv4',
      prefix: 32,
    })
    expect(parseAddressRange('192.168.10.0/24')).toEqual({
      address: '192.168.10.0',
      family: 'ipv4',
      prefix: 24,
    })
    expect(parseAddressRange('fd00::/8')).toEqual({ address: 'fd00::', family: 'ipv6', prefix: 8 })
    for (const wrong of [
      'gate.local',
      '192.168.10.0/33',
      '::/129',
      '300.1.1.1',
      '10.0.0.0/',
      '',
      '1.2.3.4/24/1',
    ]) {
      expect(parseAddressRange(wrong), wrong).toBeUndefined()
    }
  })

  it('match the addresses in them, also as a dual-stack listener reports IPv4 peers', () => {
    const allowed = addressMatcher(['192.168.10.0/24', '10.0.0.5', 'fd00::/8'])
    expect(allowed('192.168.10.7')).toBe(true)
    expect(allowed('::ffff:192.168.10.7')).toBe(true)
    expect(allowed('10.0.0.5')).toBe(true)
    expect(allowed('fd12::1')).toBe(true)
    expect(allowed('192.168.11.7')).toBe(false)
    expect(allowed('10.0.0.6')).toBe(false)
    expect(allowed('127.0.0.1')).toBe(false)
    expect(allowed('')).toBe(false)
    expect(allowed('not an address')).toBe(false)
  })
})
