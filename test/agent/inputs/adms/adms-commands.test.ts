import { describe, expect, it } from 'vitest'
import {
  commandText,
  parseCommandResults,
  parseOptionPairs,
  pollReply,
} from '../../../../agent/inputs/adms/adms-commands.js'

describe('commands the agent can build', () => {
  it('are reads only: INFO and DATA QUERY ATTLOG, with its two times TAB-separated', () => {
    expect(commandText({ kind: 'info' })).toBe('INFO')
    expect(commandText({ kind: 'backfill', from: '2026-11-01 00:00:00', to: '2026-11-20 23:59:59' })).toBe(
      'DATA QUERY ATTLOG StartTime=2026-11-01 00:00:00\tEndTime=2026-11-20 23:59:59',
    )
  })

  it('refuses times that could smuggle a second command into the line', () => {
    expect(() =>
      commandText({
        kind: 'backfill',
        from: '2026-11-01 00:00:00\nC:9:CLEAR LOG',
        to: '2026-11-20 23:59:59',
      }),
    ).toThrow(/YYYY-MM-DD/)
  })

  it('answers a poll OK, or one C:<id>:<command> line per command', () => {
    expect(pollReply([])).toBe('OK')
    expect(
      pollReply([
        { id: '17', text: 'INFO' },
        { id: '18', text: 'DATA QUERY ATTLOG StartTime=2026-11-01 00:00:00\tEndTime=2026-11-02 00:00:00' },
      ]),
    ).toBe('C:17:INFO\nC:18:DATA QUERY ATTLOG StartTime=2026-11-01 00:00:00\tEndTime=2026-11-02 00:00:00\n')
  })
})

describe('command results (POST /iclock/devicecmd)', () => {
  it('reads one result a line, batched in one body, LF or CRLF', () => {
    expect(
      parseCommandResults('ID=1&Return=0&CMD=DATA\r\nID=2&Return=-1002&CMD=CHECK\nID=3&Return=-1&CMD=DATA\n'),
    ).toEqual([
      { id: '1', returnCode: 0, command: 'DATA', details: {} },
      { id: '2', returnCode: -1002, command: 'CHECK', details: {} },
      { id: '3', returnCode: -1, command: 'DATA', details: {} },
    ])
  })

  it("reads INFO's details, without the ~ some keys carry", () => {
    const body = [
      'ID=1795672808&Return=0&CMD=INFO',
      '~DeviceName=SpeedFace-V5L',
      'MAC=00:17:61:12:f8:db',
      'TransactionCount=85000',
      '~MaxAttLogCount=100000',
      'UserCount=12',
      'FWVersion=ZAM180-NF-Ver1.1.17',
      '',
    ].join('\n')
    expect(parseCommandResults(body)).toEqual([
      {
        id: '1795672808',
        returnCode: 0,
        command: 'INFO',
        details: {
          DeviceName: 'SpeedFace-V5L',
          MAC: '00:17:61:12:f8:db',
          TransactionCount: '85000',
          MaxAttLogCount: '100000',
          UserCount: '12',
          FWVersion: 'ZAM180-NF-Ver1.1.17',
        },
      },
    ])
  })

  it('reads the one-key-a-line layout (ID, Return, CMD, Content on lines of their own)', () => {
    expect(parseCommandResults('ID=32\nReturn=0\nCMD=Shell\nContent=Tue Mar 24 16:12:26 GMT 2026\n')).toEqual(
      [{ id: '32', returnCode: 0, command: 'Shell', details: { Content: 'Tue Mar 24 16:12:26 GMT 2026' } }],
    )
  })

  it('skips what cannot be matched to a command, and reads nothing before the first ID', () => {
    expect(
      parseCommandResults(
        'Return=0\nID=&Return=0&CMD=X\nID=ok&Return=zero&CMD=Y\nID=a b&Return=0\nID=7&Return=0\n',
      ),
    ).toEqual([{ id: '7', returnCode: 0, command: '', details: {} }])
    expect(parseCommandResults('')).toEqual([])
    expect(parseCommandResults('\u0000\u0001garbage')).toEqual([])
  })

  it('reads at most a bounded number of results and details', () => {
    const many = Array.from({ length: 1000 }, (_, i) => `ID=${i}&Return=0&CMD=DATA`).join('\n')
    expect(parseCommandResults(many)).toHaveLength(256)
    const details = ['ID=1&Return=0&CMD=INFO', ...Array.from({ length: 1000 }, (_, i) => `K${i}=v`)].join(
      '\n',
    )
    expect(Object.keys(parseCommandResults(details)[0]?.details ?? {})).toHaveLength(128)
  })
})

describe('a table=options upload', () => {
  it('reads k=v pairs separated by commas or lines', () => {
    expect(parseOptionPairs('~DeviceName=K40,FWVersion=Ver 6.60,UserCount=3\nIPAddress=10.0.0.9')).toEqual({
      DeviceName: 'K40',
      FWVersion: 'Ver 6.60',
      UserCount: '3',
      IPAddress: '10.0.0.9',
    })
  })
})
