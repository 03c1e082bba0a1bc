import { describe, expect, it } from 'vitest'
import { parseListenAddress } from '../../../agent/config/listen-address.js'

describe('parseListenAddress', () => {
  it('reads IPv4, host names and bracketed IPv6', () => {
    expect(parseListenAddress('127.0.0.1:9410')).toEqual({ host: '127.0.0.1', port: 9410 })
    expect(parseListenAddress('localhost:1')).toEqual({ host: 'localhost', port: 1 })
    expect(parseListenAddress('agent.plant.local:65535')).toEqual({ host: 'agent.plant.local', port: 65535 })
    expect(parseListenAddress('[::1]:9410')).toEqual({ host: '::1', port: 9410 })
  })

  it('refuses port 0, ports past 65535, bare IPv6 and odd host names', () => {
    for (const text of [
      '127.0.0.1:0',
      '127.0.0.1:65536',
      '::1:9410',
      '[::1]',
      'my host:9410',
      ':9410',
      '[zz]:1',
    ]) {
      expect(parseListenAddress(text), text).toBeUndefined()
    }
  })
})
