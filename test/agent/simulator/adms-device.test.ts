/**
 * The ADMS (iclock PUSH) device model against a protocol server written in the test
 * (adms-test-server.ts), not the agent's: the handshake, the clock and zone it takes from the
 * reply, uploads that leave the device only on `OK: n`, the ATTLOGStamp cursor, command polls and
 * their results, and a stop that leaves nothing running. Delays are the server's, scaled by
 * timeScale; no assertion depends on how long anything took.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { AdmsDevice } from '../../../agent/simulator/adms-device.js'
import type { AdmsDeviceOptions } from '../../../agent/simulator/adms-device-options.js'
import { AdmsHandshakeError, AdmsRecordNotAcknowledgedError } from '../../../agent/simulator/adms-errors.js'
import {
  AdmsTestServer,
  isHandshake,
  isPing,
  isPoll,
  isResult,
  isUpload,
  type SeenRequest,
  type UploadReply,
} from './adms-test-server.js'

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const SN = 'CGXH201360036'
/** The host clock the device is given: far from the server's, so only the Date header can be right. */
const HOST_NOW = Date.parse('2026-03-01T00:00:00Z')
/** The server's time in its handshake replies. */
const SERVER_NOW = Date.parse('2026-11-21T03:30:00Z')

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function setup(options: Partial<AdmsDeviceOptions> = {}, configure?: (server: AdmsTestServer) => void) {
  const server = new AdmsTestServer()
  server.date = new Date(SERVER_NOW).toUTCString()
  configure?.(server)
  const url = await server.start()
  cleanups.push(() => server.close())
  const notices: string[] = []
  const device = new AdmsDevice({
    url,
    serialNumber: SN,
    timeScale: 0.01,
    now: () => HOST_NOW,
    log: (m) => notices.push(m),
    ...options,
  })
  cleanups.push(() => device.stop())
  return { server, device, notices, url }
}

/** A promise's state, read without waiting for it. */
function track(promise: Promise<void>) {
  const state = { settled: false, error: undefined as Error | undefined }
  promise.then(
    () => {
      state.settled = true
    },
    (err: Error) => {
      state.settled = true
      state.error = err
    },
  )
  return state
}

const fields = (line: string) => line.split('\t')

describe('AdmsDevice: the handshake', () => {
  it('comes first, with SN, options=all, pushver and language, as firmware sends it', async () => {
    const { server, device } = await setup()
    await device.start()
    const [first] = server.requests
    expect(first).toMatchObject({ method: 'GET', path: '/iclock/cdata' })
    expect(first?.rawQuery).toBe(`SN=${SN}&options=all&pushver=2.4.1&language=69`)
    expect(first?.headers).toMatchObject({
      'user-agent': 'iClock Proxy/1.09',
      accept: '*/*',
      connection: 'close',
    })
    expect(device.stats.handshakes).toBe(1)
    expect(device.serverOptions).toMatchObject({
      attLogStamp: 0,
      errorDelaySeconds: 1,
      delaySeconds: 10,
      realtime: true,
      timeZoneMinutes: 330,
    })
  })

  it('takes its clock from the Date header and its zone from TimeZone (minutes form: 330)', async () => {
    const { device, server } = await setup()
    await device.start()
    expect(device.clockOffsetMs).toBe(SERVER_NOW - HOST_NOW)
    expect(device.timeZoneMinutes).toBe(330)
    await device.punch({ pin: '7', status: 0 })
    await device.punch({ pin: '7', status: 1, at: HOST_NOW + 8 * 3600_000 + 90_000 })
    expect(device.log.map((r) => r.time)).toEqual(['2026-11-21 09:00:00', '2026-11-21 17:01:30'])
    expect(server.uploads().flatMap((u) => u.lines.map((l) => fields(l).slice(0, 3)))).toEqual([
      ['7', '2026-11-21 09:00:00', '0'],
      ['7', '2026-11-21 17:01:30', '1'],
    ])
  })

  for (const [timeZone, minutes, wall] of [
    ['8', 480, '2026-11-21 11:30:00'],
    ['-5', -300, '2026-11-20 22:30:00'],
    ['345', 345, '2026-11-21 09:15:00'],
    ['-210', -210, '2026-11-21 00:00:00'],
    ['14', 840, '2026-11-21 17:30:00'],
  ] as const) {
    it(`reads TimeZone=${timeZone} as ${minutes} minutes east of UTC`, async () => {
      const { device } = await setup({}, (s) => {
        s.options.TimeZone = timeZone
      })
      await device.start()
      expect(device.timeZoneMinutes).toBe(minutes)
      await device.punch({ pin: '1', status: 0 })
      expect(device.log[0]?.time).toBe(wall)
    })
  }

  it('reads a reply with CRLF lines, keys in another order and keys it does not know', async () => {
    const { device } = await setup({}, (s) => {
      s.handshakeBody =
        'GET OPTION FROM: X\r\nTimeZone=8\r\nNewFeature=on\r\nRealtime=1\r\nATTLOGStamp=42\r\nDelay=30\r\n'
    })
    await device.start()
    expect(device.serverOptions).toMatchObject({
      attLogStamp: 42,
      delaySeconds: 30,
      timeZoneMinutes: 480,
      raw: { NewFeature: 'on' },
    })
  })

  it('with failFast, a 403 rejects start() with the status and body, and the device stops', async () => {
    const { device, server } = await setup({}, (s) => {
      s.handshakeStatus = 403
      s.handshakeBody = 'device not registered'
    })
    const started = device.start({ failFast: true })
    await expect(started).rejects.toBeInstanceOf(AdmsHandshakeError)
    await expect(started).rejects.toMatchObject({
      status: 403,
      body: 'device not registered',
      message: `the handshake of ${SN} was answered HTTP 403: device not registered`,
    })
    await device.stop()
    expect(server.requests).toHaveLength(1)
  })

  it('without failFast, retries a refused handshake after ErrorDelay and uploads nothing before one succeeds', async () => {
    const { device, server } = await setup({}, (s) => {
      s.handshakeStatus = 403
    })
    const punched = track(device.punch({ pin: '1', status: 0 }))
    const started = device.start()
    await server.count(isHandshake, 3)
    expect(server.requests.every(isHandshake)).toBe(true)
    expect(punched.settled).toBe(false)
    server.handshakeStatus = 200
    await started
    await device.flush()
    const firstUpload = server.requests.findIndex(isUpload)
    expect(server.requests.slice(0, firstUpload).filter(isHandshake).length).toBeGreaterThanOrEqual(4)
    expect(device.stats.handshakes).toBe(1)
    expect(device.stats.failures).toBeGreaterThanOrEqual(3)
  })

  it('a server that is not there: failFast rejects with the connection error', async () => {
    const { device, server } = await setup()
    await server.close()
    await expect(device.start({ failFast: true })).rejects.toMatchObject({
      status: undefined,
      message: expect.stringMatching(/got no reply: connect ECONNREFUSED/),
    })
  })
})

describe('AdmsDevice: uploads leave the device only on OK: n', () => {
  const failures: [string, UploadReply][] = [
    ['a 503', '503'],
    ['a bare OK', 'bare-ok'],
    ['a count short by one', 'wrong-count'],
    ['a dropped connection', 'drop'],
    ['no reply (the request timeout)', 'hang'],
  ]
  for (const [name, reply] of failures) {
    it(`posts the same batch again after ${name}, until acknowledged`, async () => {
      const { device, server } = await setup({ requestTimeoutMs: 300 }, (s) => {
        s.uploadReplies = [reply, reply]
      })
      await device.start()
      const first = track(device.punch({ pin: '1', status: 0 }))
      const second = track(device.punch({ pin: '2', status: 1 }))
      const cursorBefore = device.cursor
      // What the device had acknowledged and its cursor, as each post came.
      const seen: [boolean, number][] = []
      server.onRequest = (r) => {
        if (isUpload(r)) seen.push([first.settled || second.settled, device.cursor])
      }
      await device.flush()
      expect(seen).toEqual([
        [false, cursorBefore],
        [false, cursorBefore],
        [false, cursorBefore],
      ])
      const uploads = server.requests.filter(isUpload)
      expect(uploads).toHaveLength(3)
      expect(new Set(uploads.map((u) => u.body)).size).toBe(1)
      expect(new Set(uploads.map((u) => u.rawQuery)).size).toBe(1)
      expect(uploads[0]?.query.get('Stamp')).toBe(String(device.log[1]?.stamp))
      expect(device.cursor).toBe(device.log[1]?.stamp)
      expect(device.log.every((r) => r.acknowledged && r.acknowledgedBy === 'reply')).toBe(true)
      expect(device.stats).toMatchObject({ batchesPosted: 3, batchesResent: 2, recordsAcknowledged: 2 })
      expect(device.stats.failures).toBe(2)
    })
  }

  it('takes OK:n, without the space, as an acknowledgement too', async () => {
    const { device, server } = await setup({}, (s) => {
      s.uploadDefault = 'ok-compact'
    })
    await device.start()
    await device.punch({ pin: '1', status: 0 })
    expect(server.requests.filter(isUpload)).toHaveLength(1)
    expect(device.stats.failures).toBe(0)
  })

  it('resends the batch unchanged while new records wait for the next one', async () => {
    const { device, server } = await setup({ batchSize: 10 }, (s) => {
      s.uploadReplies = ['503']
    })
    await device.start()
    let late: Promise<void> | undefined
    server.onRequest = (r) => {
      // A punch while the first batch is failing: it is not slipped into the batch sent again.
      if (isUpload(r) && late === undefined) late = device.punch({ pin: 'late', status: 0 })
    }
    const early = device.punch({ pin: 'early', status: 0 })
    await early
    await late
    const uploads = server.uploads()
    expect(uploads.map((u) => u.lines.map((l) => fields(l)[0]))).toEqual([['early'], ['early'], ['late']])
    expect(uploads.map((u) => u.stamp)).toEqual([
      String(device.log[0]?.stamp),
      String(device.log[0]?.stamp),
      String(device.log[1]?.stamp),
    ])
  })

  it('sends at most batchSize records a batch, the next right away, with a ping between (push 2.4)', async () => {
    const { device, server } = await setup({ batchSize: 2 })
    const punches = [1, 2, 3, 4, 5].map((k) => device.punch({ pin: String(k), status: 0 }))
    await device.start()
    await Promise.all(punches)
    const steps = server.requests
      .filter((r) => isUpload(r) || isPing(r))
      .map((r) => (isPing(r) ? 'ping' : 'post'))
    expect(steps).toEqual(['post', 'ping', 'post', 'ping', 'post'])
    expect(server.uploads().map((u) => u.lines.length)).toEqual([2, 2, 1])
    expect(server.requests.filter(isPing)[0]?.rawQuery).toBe(`SN=${SN}`)
  })

  it('sends no ping between batches before push 2.4', async () => {
    const { device, server } = await setup({ batchSize: 2, pushVersion: '2.2.14' })
    const punches = [1, 2, 3].map((k) => device.punch({ pin: String(k), status: 0 }))
    await device.start()
    await Promise.all(punches)
    expect(server.requests.filter(isPing)).toEqual([])
    expect(server.requests[0]?.query.get('pushver')).toBe('2.2.14')
  })

  for (const count of [5, 7, 9, 12] as const) {
    it(`writes ${count} fields a record`, async () => {
      const { device, server } = await setup({ fields: count })
      await device.start()
      await device.punch({ pin: '42', status: 3, verify: 15, workcode: 7 })
      const [line] = server.uploads()[0]?.lines ?? []
      const values = fields(line ?? '')
      expect(values).toHaveLength(count)
      expect(values.slice(0, 5)).toEqual(['42', '2026-11-21 09:00:00', '3', '15', '7'])
      if (count >= 7) expect(values.slice(5, 7)).toEqual(['0', '0'])
      if (count >= 9) expect(values.slice(7, 9)).toEqual(['0', '36.5'])
      if (count === 12) {
        expect(values[10]).toBe('+19800')
        expect(Buffer.from(values[11] ?? '', 'base64').length).toBeGreaterThan(0)
      }
    })
  }

  it('ends lines with CRLF when its firmware does', async () => {
    const { device, server } = await setup({ lineEnding: '\r\n' })
    await device.start()
    await Promise.all([device.punch({ pin: '1', status: 0 }), device.punch({ pin: '2', status: 1 })])
    const bodies = server.requests.filter(isUpload).map((r) => r.body)
    expect(bodies.join('')).toMatch(/^1\t[^\r\n]+\r\n2\t[^\r\n]+\r\n$/)
  })

  for (const contentType of [
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/push;charset=UTF-8',
    null,
  ]) {
    it(`sends Content-Type ${contentType ?? '(none)'}`, async () => {
      const { device, server } = await setup({ contentType })
      await device.start()
      await device.punch({ pin: '1', status: 0 })
      const [upload] = server.requests.filter(isUpload)
      expect(upload?.headers['content-type']).toBe(contentType ?? undefined)
      expect(upload?.headers['content-length']).toBe(String(Buffer.byteLength(upload?.body ?? '')))
    })
  }

  it('takes a ready-made ATTLOG line (the simulate link), written in its own field count', async () => {
    const { device, server } = await setup({ fields: 9 })
    await device.start()
    await device.addLine('E001\t2026-11-21 18:05:09\t1\t1\t0')
    expect(server.uploads()[0]?.lines).toEqual(['E001\t2026-11-21 18:05:09\t1\t1\t0\t0\t0\t0\t36.5'])
    expect(() => device.addLine('E001 2026-11-21 18:05:09')).toThrow(/not an ATTLOG line/)
  })

  it('with Realtime=0 keeps records until TransInterval, or until a LOG command', async () => {
    const { device, server } = await setup({}, (s) => {
      s.options.Realtime = '0'
      s.options.TransInterval = '600'
      s.options.Delay = '1'
    })
    await device.start()
    const punched = track(device.punch({ pin: '1', status: 0 }))
    // Polls go on every Delay; the record waits.
    await server.count(isPoll, 3)
    expect(server.requests.filter(isUpload)).toEqual([])
    expect(punched.settled).toBe(false)
    // The next poll gets the LOG command; the upload follows it.
    const askedFrom = server.requests.length
    server.commandReplies.push('C:L1:LOG')
    await device.flush()
    const logPoll = server.requests.findIndex((r, k) => k >= askedFrom && isPoll(r))
    expect(server.requests.findIndex(isUpload)).toBeGreaterThan(logPoll)
    const result = await server.next(isResult)
    expect(result.body).toBe('ID=L1&Return=0&CMD=LOG\n')
  })
})

describe('AdmsDevice: the ATTLOGStamp cursor', () => {
  it('moves only on acknowledgement, and the next handshake’s ATTLOGStamp sets it again', async () => {
    const { device, server } = await setup()
    await device.start()
    for (const pin of ['1', '2', '3']) await device.punch({ pin, status: 0 })
    const [s1, s2, s3] = device.log.map((r) => r.stamp) as [number, number, number]
    expect(s2 - s1).toBeGreaterThan(0)
    expect(device.cursor).toBe(s3)
    expect(server.acknowledgedStamp).toBe(String(s3))

    // The server says it has up to record 2: record 3 is sent again, 1 and 2 are not.
    server.options.ATTLOGStamp = String(s2)
    const before = server.requests.length
    await device.reboot()
    expect(device.cursor).toBe(s2)
    await device.punch({ pin: '4', status: 0 })
    const after = server.requests.slice(before).filter(isUpload)
    expect(
      after.flatMap((r) =>
        r.body
          .trim()
          .split('\n')
          .map((l) => fields(l)[0]),
      ),
    ).toEqual(['3', '4'])

    // None: everything again.
    server.options.ATTLOGStamp = 'None'
    const again = server.requests.length
    await device.reboot()
    await server.next((r) => isUpload(r) && r.query.get('Stamp') === String(device.log[3]?.stamp), again)
    const resent = server.requests.slice(again).filter(isUpload)
    expect(
      resent.flatMap((r) =>
        r.body
          .trim()
          .split('\n')
          .map((l) => fields(l)[0]),
      ),
    ).toEqual(['1', '2', '3', '4'])
    expect(device.stats.handshakes).toBe(3)
  })

  it('takes records at or below the server’s stamp as acknowledged without sending them', async () => {
    const { device, server } = await setup({}, (s) => {
      s.uploadDefault = '503'
    })
    await device.start()
    const one = device.punch({ pin: '1', status: 0 })
    const two = device.punch({ pin: '2', status: 0 })
    await server.next(isUpload)
    server.options.ATTLOGStamp = String(device.log[0]?.stamp)
    await device.reboot()
    const rebooted = server.requests.findLastIndex(isHandshake)
    await one
    expect(device.log[0]).toMatchObject({ acknowledged: true, acknowledgedBy: 'stamp' })
    expect(device.log[1]).toMatchObject({ acknowledged: false })
    server.uploadDefault = 'ok'
    await two
    const afterReboot = server.requests.slice(rebooted).filter(isUpload)
    expect(new Set(afterReboot.map((r) => r.body))).toEqual(new Set([`${device.log[1]?.line}\n`]))
    // A new record always goes above the server's cursor, whatever its stamp counter said.
    server.options.ATTLOGStamp = String(Number.MAX_SAFE_INTEGER - 10)
    await device.reboot()
    await device.punch({ pin: '3', status: 0 })
    expect(device.log[2]?.stamp).toBe(Number.MAX_SAFE_INTEGER - 9)
    expect(device.log[2]?.acknowledgedBy).toBe('reply')
  })

  it('forgetStamps(): the next handshake ignores ATTLOGStamp and the whole log goes again', async () => {
    const { device, server } = await setup({ batchSize: 2 })
    await device.start()
    await Promise.all(['1', '2', '3'].map((pin) => device.punch({ pin, status: 0 })))
    server.options.ATTLOGStamp = server.acknowledgedStamp as string
    const before = server.requests.length
    device.forgetStamps()
    await device.reboot()
    const last = await server.next(
      (r) => isUpload(r) && r.query.get('Stamp') === server.options.ATTLOGStamp,
      before,
    )
    // The device's next request comes after it has read the acknowledgement.
    await server.next(() => true, server.requests.indexOf(last) + 1)
    const resent = server.requests.slice(before).filter(isUpload)
    expect(
      resent.map((r) =>
        r.body
          .trim()
          .split('\n')
          .map((l) => fields(l)[0]),
      ),
    ).toEqual([['1', '2'], ['3']])
    expect(device.cursor).toBe(device.log[2]?.stamp)
    // Once: the handshake after honours the stamp again. After a handshake the device polls, then
    // uploads what is pending, then waits for the next poll: by the second poll, nothing went.
    const later = server.requests.length
    await device.reboot()
    const poll = await server.next(isPoll, later)
    await server.next(isPoll, server.requests.indexOf(poll) + 1)
    expect(server.requests.slice(later).filter(isUpload)).toEqual([])
  })

  it('stamps are opaque: a firstStamp of any size goes through unchanged', async () => {
    const { device, server } = await setup({ firstStamp: 9_000_000_001 })
    await device.start()
    await device.punch({ pin: '1', status: 0 })
    expect(server.uploads()[0]?.stamp).toBe('9000000001')
  })
})

describe('AdmsDevice: command polls', () => {
  it('polls getrequest every Delay with INFO, percent-encoded, and keeps polling', async () => {
    const { device, server } = await setup({}, (s) => {
      s.options.Delay = '1'
    })
    const punched = device.punch({ pin: '1', status: 0 })
    await device.start()
    await punched
    const polls = await server.count(isPoll, 4)
    expect(polls[0]?.rawQuery).toBe(
      `SN=${SN}&INFO=Ver%208.0.4.2-20191105,12,10,1,192.168.1.201,10,7,15,0,111`,
    )
    expect(polls[0]?.query.get('INFO')).toBe('Ver 8.0.4.2-20191105,12,10,1,192.168.1.201,10,7,15,0,111')
    expect(device.stats.polls).toBeGreaterThanOrEqual(4)
  })

  it('a long Delay holds polls while uploads go on', async () => {
    const { device, server } = await setup({}, (s) => {
      s.options.Delay = '3600'
    })
    await device.start()
    await server.next(isPoll)
    for (const pin of ['1', '2', '3']) await device.punch({ pin, status: 0 })
    expect(server.requests.filter(isPoll)).toHaveLength(1)
  })

  it('INFO: posts its details after the result line', async () => {
    const { device, server } = await setup({ info: { users: 40, attLogCapacity: 200_000 }, model: 'K40' })
    await device.start()
    await device.punch({ pin: '1', status: 0 })
    server.commandReplies.push('C:101:INFO')
    const result = await server.next(isResult)
    const lines = result.body.trimEnd().split('\n')
    expect(lines[0]).toBe('ID=101&Return=0&CMD=INFO')
    const values = Object.fromEntries(lines.slice(1).map((l) => l.split('=') as [string, string]))
    expect(values).toMatchObject({
      '~DeviceName': 'K40',
      TransactionCount: '1',
      '~MaxAttLogCount': '200000',
      UserCount: '40',
      FWVersion: 'Ver 8.0.4.2-20191105',
      IPAddress: '192.168.1.201',
    })
    expect(values.MAC).toMatch(/^00:17:61(:[0-9A-F]{2}){3}$/)
    for (const key of [
      '~MaxUserCount',
      'FPCount',
      '~MaxFingerCount',
      'FaceCount',
      '~MaxFaceCount',
      '~Platform',
    ])
      expect(values[key]).toBeDefined()
    expect(device.commandsReceived).toEqual([{ id: '101', command: 'INFO' }])
  })

  it('runs every command of one reply and posts all results in one POST; unknown ones are -1002', async () => {
    const { device, server } = await setup({}, (s) => {
      s.commandReplies.push(
        [
          'C:1:CHECK',
          'C:2:SHELL date',
          'C:3:DATA UPDATE USERINFO PIN=7\tName=Asha\tPri=0',
          'C:4:DATA DELETE USERINFO PIN=7',
          'C:5:SET OPTION Delay=5',
          'C:6:DATA QUERY USERINFO',
          'C:7:Shell ls',
        ].join('\r\n'),
      )
    })
    await device.start()
    const result = await server.next(isResult)
    expect(result.body.trimEnd().split('\n')).toEqual([
      'ID=1&Return=0&CMD=CHECK',
      'ID=2&Return=0&CMD=SHELL',
      'ID=3&Return=0&CMD=DATA',
      'ID=4&Return=0&CMD=DATA',
      'ID=5&Return=-1002&CMD=SET',
      'ID=6&Return=-1002&CMD=DATA',
      'ID=7&Return=0&CMD=SHELL',
    ])
    expect(server.requests.filter(isResult)).toHaveLength(1)
    expect(device.commandsReceived.map((c) => c.id)).toEqual(['1', '2', '3', '4', '5', '6', '7'])
    expect(device.commandsReceived[2]?.command).toBe('DATA UPDATE USERINFO PIN=7\tName=Asha\tPri=0')
  })

  it('DATA QUERY ATTLOG uploads the records in the range as ordinary batches; the cursor stays', async () => {
    const { device, server } = await setup({ batchSize: 2 })
    await device.start()
    const minute = 60_000
    for (let k = 0; k < 6; k++)
      await device.punch({ pin: String(k), status: k % 2, at: HOST_NOW + k * minute })
    const cursor = device.cursor
    const before = server.requests.length
    server.commandReplies.push(
      'C:Q1:DATA QUERY ATTLOG StartTime=2026-11-21 09:01:00\tEndTime=2026-11-21 09:04:00',
    )
    const result = await server.next(isResult, before)
    expect(result.body).toBe('ID=Q1&Return=0&CMD=DATA\n')
    const uploads = server.requests.slice(before).filter(isUpload)
    expect(
      uploads.map((r) =>
        r.body
          .trim()
          .split('\n')
          .map((l) => fields(l).slice(0, 2)),
      ),
    ).toEqual([
      [
        ['1', '2026-11-21 09:01:00'],
        ['2', '2026-11-21 09:02:00'],
      ],
      [
        ['3', '2026-11-21 09:03:00'],
        ['4', '2026-11-21 09:04:00'],
      ],
    ])
    expect(uploads.map((r) => r.query.get('Stamp'))).toEqual([
      String(device.log[2]?.stamp),
      String(device.log[4]?.stamp),
    ])
    // Every upload before the results: the server can count on the records having come.
    expect(server.requests.indexOf(uploads.at(-1) as SeenRequest)).toBeLessThan(
      server.requests.indexOf(result),
    )
    expect(device.cursor).toBe(cursor)
  })

  it('DATA QUERY ATTLOG with nothing in range, or without a TAB between the bounds: -1', async () => {
    const { device, server } = await setup()
    await device.start()
    await device.punch({ pin: '1', status: 0 })
    server.commandReplies.push(
      'C:E1:DATA QUERY ATTLOG StartTime=2020-01-01 00:00:00\tEndTime=2020-01-02 00:00:00\n' +
        'C:E2:DATA QUERY ATTLOG StartTime=2026-11-21 00:00:00 EndTime=2026-11-22 00:00:00',
    )
    const result = await server.next(isResult)
    expect(result.body).toBe('ID=E1&Return=-1&CMD=DATA\nID=E2&Return=-1&CMD=DATA\n')
  })

  it('CLEAR LOG: obeyed, so a test can prove a server never sends it', async () => {
    const { device, server } = await setup({}, (s) => {
      s.uploadDefault = '503'
    })
    await device.start()
    const erased = device.punch({ pin: '1', status: 0 })
    await server.next(isUpload)
    server.commandReplies.push('C:X:CLEAR LOG')
    await expect(erased).rejects.toBeInstanceOf(AdmsRecordNotAcknowledgedError)
    await expect(erased).rejects.toThrow(/CLEAR LOG erased the record/)
    expect(device.log).toEqual([])
    expect((await server.next(isResult)).body).toBe('ID=X&Return=0&CMD=CLEAR\n')
    expect(device.commandsReceived.map((c) => c.command)).toContain('CLEAR LOG')
  })

  it('REBOOT: posts its result, then handshakes again', async () => {
    const { device, server } = await setup({}, (s) => {
      s.commandReplies.push('C:R:REBOOT')
    })
    await device.start()
    const result = await server.next(isResult)
    expect(result.body).toBe('ID=R&Return=0&CMD=REBOOT\n')
    const again = await server.next(isHandshake, server.requests.indexOf(result))
    expect(server.requests.filter(isHandshake)).toEqual([server.requests[0], again])
  })
})

describe('AdmsDevice: stop', () => {
  it('leaves no timer and no socket, even with a request in flight and records not acknowledged', async () => {
    const resources = () => {
      const counts = { Timeout: 0, TCPSocketWrap: 0 }
      for (const kind of process.getActiveResourcesInfo())
        if (kind in counts) counts[kind as keyof typeof counts]++
      return counts
    }
    const before = resources()
    const { device, server } = await setup({ requestTimeoutMs: 60_000 }, (s) => {
      s.uploadDefault = 'hang'
    })
    await device.start()
    const pending = device.punch({ pin: '1', status: 0 })
    await server.next(isUpload)
    await device.stop()
    await expect(pending).rejects.toThrow(/stopped before the record was acknowledged/)
    await server.close()
    // Closed handles leave the list in the close phase of the event loop, after setImmediate's.
    for (let turn = 0; turn < 2; turn++) await new Promise((r) => setImmediate(r))
    // The test runner's own timers come and go; the device's would be more than there were before.
    const after = resources()
    expect(after.TCPSocketWrap).toBeLessThanOrEqual(before.TCPSocketWrap)
    expect(after.Timeout).toBeLessThanOrEqual(before.Timeout)
    await expect(device.punch({ pin: '2', status: 0 })).rejects.toBeInstanceOf(AdmsRecordNotAcknowledgedError)
  })

  it('a process that ran a device exits by itself after stop(), a request in flight or not', async () => {
    // The first upload is acknowledged; the second gets no reply until the device gives up on it.
    const { server, url } = await setup({}, (s) => {
      s.options.Delay = '1'
      s.uploadReplies = ['ok']
      s.uploadDefault = 'hang'
    })
    const dir = await mkdtemp(join(tmpdir(), 'hajri-adms-exit-'))
    cleanups.push(() => rm(dir, { recursive: true, force: true }))
    const script = join(dir, 'device.mts')
    const module = pathToFileURL(join(REPO_ROOT, 'agent/simulator/adms-device.ts')).href
    await writeFile(
      script,
      [
        `import { AdmsDevice } from ${JSON.stringify(module)}`,
        `const device = new AdmsDevice({ url: ${JSON.stringify(url)}, serialNumber: 'EXIT1', timeScale: 0.01 })`,
        'await device.start()',
        "await device.punch({ pin: '1', status: 0 })",
        "const second = device.punch({ pin: '2', status: 0 }).then(() => 'acknowledged', (err) => err.message)",
        // The test says on stdin when the second upload has reached the server.
        "await new Promise((r) => process.stdin.once('data', r))",
        'await device.stop()',
        'console.error(await second)',
      ].join('\n'),
    )
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: REPO_ROOT,
      stdio: ['pipe', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString()
    })
    const exited = once(child, 'exit')
    await server.count(isUpload, 2)
    child.stdin.end('stop\n')
    const [code] = await exited
    expect(stderr).toBe('the device was stopped before the record was acknowledged\n')
    expect(code).toBe(0)
    expect(server.uploads().map((u) => u.lines.map((l) => fields(l)[0]))).toEqual([['1'], ['2']])
  })
})
