import { describe, expect, it } from 'vitest'
import { handshakeReply, timeZoneOption } from '../../../../agent/inputs/adms/adms-options.js'

const at = (iso: string) => Date.parse(iso)

describe('the TimeZone option', () => {
  it('gives whole-hour zones in hours and the others in minutes, as the protocol reads them', () => {
    const now = at('2026-11-26T06:00:00Z')
    expect(timeZoneOption('Asia/Kolkata', now)).toBe('330')
    expect(timeZoneOption('Asia/Kathmandu', now)).toBe('345')
    expect(timeZoneOption('Asia/Dubai', now)).toBe('4')
    expect(timeZoneOption('UTC', now)).toBe('0')
    expect(timeZoneOption('America/St_Johns', now)).toBe('-210')
    expect(timeZoneOption('America/Sao_Paulo', now)).toBe('-3')
  })

  it('follows daylight saving time: the offset of the moment of the handshake', () => {
    expect(timeZoneOption('Europe/London', at('2026-01-15T12:00:00Z'))).toBe('0')
    expect(timeZoneOption('Europe/London', at('2026-07-15T12:00:00Z'))).toBe('1')
    expect(timeZoneOption('Australia/Adelaide', at('2026-01-15T12:00:00Z'))).toBe('630')
    expect(timeZoneOption('Australia/Adelaide', at('2026-07-15T12:00:00Z'))).toBe('570')
  })
})

describe('the handshake reply', () => {
  const reply = (attlogStamp: string | undefined) =>
    handshakeReply({
      serialNumber: 'CJDE193560303',
      attlogStamp,
      pollSeconds: 10,
      errorDelaySeconds: 30,
      realtime: true,
      timeZone: 'Asia/Kolkata',
      now: at('2026-11-26T06:00:00Z'),
    })

  it('names the terminal first, then one option a line', () => {
    const lines = reply('9999123').trimEnd().split('\n')
    expect(lines[0]).toBe('GET OPTION FROM: CJDE193560303')
    const options = Object.fromEntries(lines.slice(1).map((l) => l.split(/=(.*)/s).slice(0, 2)))
    expect(options).toEqual({
      ATTLOGStamp: '9999123',
      OPERLOGStamp: '9999',
      ATTPHOTOStamp: '9999',
      ErrorDelay: '30',
      Delay: '10',
      TransTimes: '00:00;14:05',
      TransInterval: '1',
      TransFlag: 'TransData AttLog',
      TimeZone: '330',
      Realtime: '1',
      Encrypt: 'None',
    })
  })

  it('asks for everything when it has no cursor for the terminal', () => {
    expect(reply(undefined)).toContain('\nATTLOGStamp=None\n')
  })
})
