/**
 * The ADMS listener at the protocol level: requests written out as terminals send them (a
 * connection each, `iClock Proxy/1.09`), against the input in front of a real intake, spool and
 * dead letters. What a whole terminal does over time (resending, stamps, reboots, commands) is in
 * adms-terminal.test.ts, against the firmware model.
 */
import { connect } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { SpoolFullError } from '../../../../agent/spool/spool.js'
import { formatInZone, nowMicros, parseTimestamp } from '../../../../shared/time.js'
import { RefusingSink } from '../mqtt-test-agent.js'
import { type AdmsRig, admsDevice, attlogLine, rawRequest, SERIAL, startAdmsRig } from './adms-test-kit.js'

let rig: AdmsRig | undefined
afterEach(async () => {
  await rig?.close()
  rig = undefined
})

async function start(options: Parameters<typeof startAdmsRig>[0] = {}): Promise<AdmsRig> {
  rig = await startAdmsRig(options)
  return rig
}

/** A local wall time `minutes` ago in India, as a terminal writes it. */
function wall(minutesAgo: number): string {
  return formatInZone(nowMicros() - minutesAgo * 60_000_000, 'Asia/Kolkata')
    .slice(0, 19)
    .replace('T', ' ')
}

const upload = (r: AdmsRig, body: string, query = `SN=${SERIAL}&table=ATTLOG&Stamp=9999`) =>
  rawRequest(r.port, 'POST', `/iclock/cdata?${query}`, body, { 'Content-Type': 'text/plain' })

describe('the handshake', () => {
  it('answers the options in text/plain, with a Date header the terminal sets its clock from', async () => {
    const r = await start()
    const before = Date.now()
    const reply = await rawRequest(
      r.port,
      'GET',
      `/iclock/cdata?SN=${SERIAL}&options=all&pushver=2.4.1&language=69`,
    )
    expect(reply.status).toBe(200)
    expect(reply.headers['content-type']).toBe('text/plain')
    // RFC 9110 §6.6.1: the time the reply was made, to the second; the terminal's clock comes from it.
    const date = Date.parse(reply.headers.date ?? '')
    expect(date).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000)
    expect(date).toBeLessThanOrEqual(Date.now())
    const lines = reply.body.trim().split('\n')
    expect(lines[0]).toBe(`GET OPTION FROM: ${SERIAL}`)
    expect(lines).toEqual(
      expect.arrayContaining(['ATTLOGStamp=None', 'TimeZone=330', 'Realtime=1', 'Delay=10']),
    )
  })

  it('gives each terminal its own zone: the one its records are read in', async () => {
    const r = await start({
      devices: [
        admsDevice('gate-1', SERIAL),
        admsDevice('dubai-1', 'AEH2192760012', { timezone: 'Asia/Dubai' }),
      ],
    })
    const zone = async (sn: string) =>
      (await rawRequest(r.port, 'GET', `/iclock/cdata?SN=${sn}&options=all`)).body.match(/TimeZone=(.*)/)?.[1]
    expect(await zone(SERIAL)).toBe('330')
    expect(await zone('AEH2192760012')).toBe('4')
  })

  it('hands back the cursor of the last stored upload, across a restart of the agent', async () => {
    const r = await start()
    await upload(r, `${attlogLine('E001', wall(5), 0)}\n`, `SN=${SERIAL}&table=ATTLOG&Stamp=603923921`)
    const stamp = async () =>
      (await rawRequest(r.port, 'GET', `/iclock/cdata?SN=${SERIAL}&options=all`)).body.match(
        /ATTLOGStamp=(.*)/,
      )?.[1]
    expect(await stamp()).toBe('603923921')
    await r.restart()
    expect(await stamp()).toBe('603923921')
  })

  it('accepts the .aspx pages of eSSL firmware and a lowercase sn', async () => {
    const r = await start()
    expect((await rawRequest(r.port, 'GET', `/iclock/cdata.aspx?sn=${SERIAL}&options=all`)).status).toBe(200)
    expect((await rawRequest(r.port, 'GET', `/iclock/getrequest.aspx?SN=${SERIAL}`)).status).toBe(200)
  })
})

describe('attendance uploads', () => {
  it.each([
    [5, '\n'],
    [7, '\n'],
    [9, '\r\n'],
    [12, '\r\n'],
  ])('reads %i-field lines ending %j, answers OK: n once they are in the spool', async (fields, eol) => {
    const r = await start()
    // Taken once: a second may tick between writing the line and checking what was stored.
    const first = wall(30)
    const lines = [
      attlogLine('E001', first, 0, fields),
      attlogLine('E002', wall(29), 1, fields),
      attlogLine('E003', wall(28), 5, fields),
    ]
    const reply = await upload(r, `${lines.join(eol)}${eol}`)
    expect(reply).toMatchObject({ status: 200, body: 'OK: 3' })
    const punches = await r.agent.punches()
    expect(punches.map((p) => [p.employeeCode, p.punchType])).toEqual([
      ['E001', 'IN'],
      ['E002', 'OUT'],
      ['E003', 'OUT'],
    ])
    // Read in the terminal's zone, written with its offset.
    expect(punches[0]?.punchedAt).toBe(`${first.replace(' ', 'T')}+05:30`)
    expect(await r.agent.deadLettered()).toEqual([])
  })

  it('takes any content type, or none, as firmware sends', async () => {
    const r = await start()
    const types = ['application/x-www-form-urlencoded', 'application/push;charset=UTF-8', undefined]
    for (const [k, type] of types.entries()) {
      const headers: Record<string, string> = type ? { 'Content-Type': type } : {}
      const reply = await rawRequest(
        r.port,
        'POST',
        `/iclock/cdata?SN=${SERIAL}&table=ATTLOG&Stamp=1`,
        `${attlogLine('E001', wall(10 + k), 0)}\n`,
        headers,
      )
      expect(reply, String(type)).toMatchObject({ status: 200, body: 'OK: 1' })
    }
    expect(await r.agent.punches()).toHaveLength(3)
  })

  it('parks an unreadable line in dead letters and counts it, so the terminal does not resend the batch', async () => {
    const r = await start()
    const body = [
      attlogLine('E001', wall(10), 0),
      'garbage without tabs',
      attlogLine('E002', wall(9), 1),
      `E003\t${wall(8)}\t255\t1\t0`,
    ].join('\n')
    expect(await upload(r, body)).toMatchObject({ status: 200, body: 'OK: 4' })
    expect((await r.agent.punches()).map((p) => p.employeeCode)).toEqual(['E001', 'E002'])
    const dead = await r.agent.deadLettered()
    expect(dead.map((d) => [d.deviceId, d.reason])).toEqual([
      ['gate-1', 'malformed_frame'],
      ['gate-1', 'status_unmapped'],
    ])
    expect(dead[0]?.raw).toBe('garbage without tabs')
    // The terminal keeps working.
    expect(await upload(r, attlogLine('E004', wall(7), 0))).toMatchObject({ status: 200, body: 'OK: 1' })
  })

  it('stores a resent batch again under the same punch ids, and counts the resend', async () => {
    const r = await start()
    const resent: number[] = []
    r.agent.events.on('punchesResent', (e) => {
      resent.push(e.count)
    })
    const body = `${attlogLine('E001', wall(10), 0)}\n${attlogLine('E002', wall(9), 1)}\n`
    expect((await upload(r, body)).body).toBe('OK: 2')
    expect((await upload(r, body)).body).toBe('OK: 2')
    const punches = await r.agent.punches()
    expect(punches).toHaveLength(4)
    expect(punches.slice(2).map((p) => p.id)).toEqual(punches.slice(0, 2).map((p) => p.id))
    expect(resent).toEqual([2])
  })

  it('answers an empty upload OK: 0 and stores nothing', async () => {
    const r = await start()
    expect(await upload(r, '')).toMatchObject({ status: 200, body: 'OK: 0' })
    expect(await upload(r, '\r\n\n  \n')).toMatchObject({ status: 200, body: 'OK: 0' })
    expect(await r.agent.punches()).toEqual([])
    expect(await r.agent.deadLettered()).toEqual([])
  })

  it('applies the PIN rule of the device', async () => {
    const r = await start({ devices: [admsDevice('gate-1', SERIAL, { pin: { prefix: 'E', width: 4 } })] })
    expect((await upload(r, attlogLine('42', wall(3), 0))).body).toBe('OK: 1')
    expect((await r.agent.punches())[0]?.employeeCode).toBe('E0042')
  })

  it('acknowledges operation logs and other tables without storing them', async () => {
    const r = await start()
    const oplog = 'OPLOG 4\t0\t2026-11-26 09:00:00\t0\t0\t0\t0\nUSER PIN=42\tName=Ravi\tPri=0\n'
    expect(await upload(r, oplog, `SN=${SERIAL}&table=OPERLOG&Stamp=1`)).toMatchObject({
      status: 200,
      body: 'OK: 2',
    })
    expect(
      await upload(r, 'PIN=42\nSN=x\nsize=3\nCMD=uploadphoto\u0000abc', `SN=${SERIAL}&table=ATTPHOTO`),
    ).toMatchObject({
      status: 200,
      body: 'OK',
    })
    expect(await r.agent.punches()).toEqual([])
  })

  it('answers 503 with Retry-After and stores nothing while the spool refuses; the resend is then stored', async () => {
    let full = true
    const r = await start({
      sink: (a) => new RefusingSink(a.intake, () => (full ? new SpoolFullError('cap') : undefined)),
    })
    const body = `${attlogLine('E001', wall(10), 0)}\n`
    const refused = await upload(r, body)
    expect(refused.status).toBe(503)
    expect(refused.headers['retry-after']).toBe('30')
    expect(refused.body).not.toMatch(/^OK/)
    expect(await r.agent.punches()).toEqual([])
    full = false
    expect(await upload(r, body)).toMatchObject({ status: 200, body: 'OK: 1' })
    expect(await r.agent.punches()).toHaveLength(1)
  })

  it('answers 503, never OK, when storing fails for another reason', async () => {
    const r = await start({
      sink: (a) => new RefusingSink(a.intake, () => Object.assign(new Error('EIO'), { code: 'EIO' })),
    })
    const reply = await upload(r, `${attlogLine('E001', wall(10), 0)}\n`)
    expect(reply.status).toBe(503)
    expect(r.logs.some((l) => l.level === 50 && l.msg === 'attendance upload not stored')).toBe(true)
  })
})

describe('limits', () => {
  it('refuses a body over the limit with 413, by its Content-Length or as it streams, storing nothing', async () => {
    const r = await start({ config: { maxBodyBytes: 64 * 1024 } })
    const big = `${attlogLine('E001', wall(10), 0)}\n`.repeat(3000)
    expect((await upload(r, big)).status).toBe(413)
    // Chunked: no length given up front.
    const chunked = await rawRequest(r.port, 'POST', `/iclock/cdata?SN=${SERIAL}&table=ATTLOG`, big, {
      'Transfer-Encoding': 'chunked',
    }).catch((err: Error) => ({ status: -1, body: err.message, headers: {} }))
    // The listener may answer 413 or cut the connection once it has answered: never OK.
    expect([413, -1]).toContain(chunked.status)
    expect(await r.agent.punches()).toEqual([])
    expect(r.requests.filter((q) => q.outcome === 'too_large').length).toBeGreaterThanOrEqual(1)
    expect(await upload(r, `${attlogLine('E001', wall(10), 0)}\n`)).toMatchObject({
      status: 200,
      body: 'OK: 1',
    })
  })

  it('refuses more lines in one upload than a terminal ever sends', async () => {
    const r = await start()
    expect((await upload(r, 'x\n'.repeat(20_001))).status).toBe(413)
    expect(await r.agent.deadLettered()).toEqual([])
  })

  it('parks a line longer than any record, unread', async () => {
    const r = await start()
    expect((await upload(r, `${'9'.repeat(5000)}\t${wall(3)}\t0\n`)).body).toBe('OK: 1')
    const [dead] = await r.agent.deadLettered()
    expect(dead?.detail).toBe('the line is longer than 4096 characters')
    expect(dead?.raw).toHaveLength(1024)
  })

  it('answers a request that is not HTTP with 400, and carries on', async () => {
    const r = await start()
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(r.port, '127.0.0.1', () =>
        socket.write('\u0050\u0050\u0082\u007d garbage\r\n\r\n'),
      )
      let text = ''
      socket.on('data', (d) => (text += d))
      socket.on('close', () => resolve(text))
    })
    expect(answer).toMatch(/^HTTP\/1\.1 400/)
    expect((await rawRequest(r.port, 'GET', `/iclock/ping?SN=${SERIAL}`)).body).toBe('OK')
  })
})

describe('who may push', () => {
  it('refuses an unknown serial number, stores nothing it sends, lists it, and logs it once', async () => {
    const r = await start()
    for (let i = 0; i < 3; i++) {
      const reply = await upload(
        r,
        `${attlogLine('E001', wall(10), 0)}\n`,
        'SN=STRANGER42&table=ATTLOG&Stamp=1',
      )
      expect(reply.status).toBe(403)
      expect(reply.body).not.toMatch(/^OK/)
    }
    expect((await rawRequest(r.port, 'GET', '/iclock/cdata?SN=STRANGER42&options=all')).status).toBe(403)
    expect(await r.agent.punches()).toEqual([])
    expect(await r.agent.deadLettered()).toEqual([])
    expect(r.input.report().unknownDevices).toEqual([
      expect.objectContaining({ serialNumber: 'STRANGER42', address: '127.0.0.1', requests: 4 }),
    ])
    expect(r.logs.filter((l) => l.serialNumber === 'STRANGER42')).toHaveLength(1)
  })

  it('cuts off a peer outside adms.allowFrom before it can send anything', async () => {
    const r = await start({ config: { allowFrom: ['192.0.2.0/24'] } })
    await expect(rawRequest(r.port, 'GET', `/iclock/cdata?SN=${SERIAL}&options=all`)).rejects.toThrow()
    expect(r.requests).toContainEqual({ route: 'other', outcome: 'refused' })
  })

  it("refuses a terminal's serial number from an address the device does not allow", async () => {
    const r = await start({
      devices: [admsDevice('gate-1', SERIAL, { adms: { serialNumber: SERIAL, allowFrom: ['192.0.2.10'] } })],
    })
    expect((await upload(r, `${attlogLine('E001', wall(10), 0)}\n`)).status).toBe(403)
    expect(await r.agent.punches()).toEqual([])
  })

  it('refuses a request without a serial number, or of a protocol it does not speak', async () => {
    const r = await start()
    expect((await rawRequest(r.port, 'GET', '/iclock/cdata?options=all')).status).toBe(400)
    expect((await rawRequest(r.port, 'POST', `/iclock/registry?SN=${SERIAL}`, 'DeviceType=acc')).status).toBe(
      404,
    )
    expect((await rawRequest(r.port, 'GET', '/status')).status).toBe(404)
    expect((await rawRequest(r.port, 'DELETE', `/iclock/cdata?SN=${SERIAL}`)).status).toBe(405)
  })
})

describe('commands', () => {
  it('asks a terminal for its figures after its handshake, and reads them from the result', async () => {
    const r = await start()
    await rawRequest(r.port, 'GET', `/iclock/cdata?SN=${SERIAL}&options=all&pushver=2.4.1`)
    const poll = await rawRequest(
      r.port,
      'GET',
      `/iclock/getrequest?SN=${SERIAL}&INFO=Ver%208.0.4.2,12,10,1234,192.168.1.201,10,7,15,0,111`,
    )
    const m = /^C:(\w+):INFO$/.exec(poll.body.trim())
    expect(m).not.toBeNull()
    const result = [
      `ID=${m?.[1]}&Return=0&CMD=INFO`,
      '~DeviceName=K40',
      'TransactionCount=85000',
      '~MaxAttLogCount=100000',
      'UserCount=12',
      'FWVersion=Ver 8.0.4.2-20191105',
      '',
    ].join('\n')
    expect((await rawRequest(r.port, 'POST', `/iclock/devicecmd?SN=${SERIAL}`, result)).body).toBe('OK')
    const details = r.input.report().devices['gate-1']
    expect(details).toMatchObject({
      serialNumber: SERIAL,
      protocolVersion: 'push 2.4.1',
      model: 'K40',
      firmware: 'Ver 8.0.4.2-20191105',
      counts: { users: 12, attendanceRecords: 85_000, attendanceCapacity: 100_000, fingerprints: 10 },
      logUse: 0.85,
    })
    expect(details?.commands).toEqual([
      expect.objectContaining({ kind: 'info', state: 'done', returnCode: 0 }),
    ])
    // Once a handshake is enough for an hour.
    await rawRequest(r.port, 'GET', `/iclock/cdata?SN=${SERIAL}&options=all`)
    expect((await rawRequest(r.port, 'GET', `/iclock/getrequest?SN=${SERIAL}`)).body).toBe('OK')
  })

  it('hands a queued backfill to the next poll, once, and records the result', async () => {
    const r = await start()
    const from = parseTimestamp('2026-11-20T00:00:00+05:30') as number
    const to = parseTimestamp('2026-11-20T23:59:59+05:30') as number
    const queued = await r.input.backfill('gate-1', from, to)
    expect(queued).toMatchObject({
      state: 'queued',
      text: 'DATA QUERY ATTLOG StartTime=2026-11-20 00:00:00\tEndTime=2026-11-20 23:59:59',
    })
    const poll = await rawRequest(r.port, 'GET', `/iclock/getrequest?SN=${SERIAL}`)
    expect(poll.body).toBe(
      `C:${queued.id}:DATA QUERY ATTLOG StartTime=2026-11-20 00:00:00\tEndTime=2026-11-20 23:59:59\n`,
    )
    expect((await rawRequest(r.port, 'GET', `/iclock/getrequest?SN=${SERIAL}`)).body).toBe('OK')
    await rawRequest(r.port, 'POST', `/iclock/devicecmd?SN=${SERIAL}`, `ID=${queued.id}&Return=0&CMD=DATA\n`)
    expect(r.input.report().devices['gate-1']?.commands).toEqual([
      expect.objectContaining({ id: queued.id, state: 'done' }),
    ])
  })

  it('hands a command again after a restart handshake left it unanswered, not after a heartbeat', async () => {
    const r = await start()
    const from = parseTimestamp('2026-11-20T00:00:00+05:30') as number
    const queued = await r.input.backfill('gate-1', from, from + 3600_000_000)
    const poll = () => rawRequest(r.port, 'GET', `/iclock/getrequest?SN=${SERIAL}`)
    expect((await poll()).body).toMatch(new RegExp(`^C:${queued.id}:DATA QUERY ATTLOG`))
    // A GET of cdata without options is some firmware's heartbeat: nothing was lost.
    await rawRequest(r.port, 'GET', `/iclock/cdata?SN=${SERIAL}`)
    expect((await poll()).body).not.toContain(`C:${queued.id}:`)
    // A real handshake: the terminal restarted and never answered; it gets the command again.
    await rawRequest(r.port, 'GET', `/iclock/cdata?SN=${SERIAL}&options=all`)
    expect((await poll()).body).toContain(`C:${queued.id}:DATA QUERY ATTLOG`)
  })

  it('answers a ping and a result for no command OK', async () => {
    const r = await start()
    expect((await rawRequest(r.port, 'GET', `/iclock/ping?SN=${SERIAL}`)).body).toBe('OK')
    expect(
      (await rawRequest(r.port, 'POST', `/iclock/devicecmd?SN=${SERIAL}`, 'ID=99&Return=0&CMD=DATA')).body,
    ).toBe('OK')
  })
})

describe('terminal state', () => {
  it('is waiting until a terminal speaks, connected while it does, and disconnected once it falls silent', async () => {
    let clock = Date.now()
    const r = await start({ input: { now: () => clock, watchEveryMs: 10 } })
    const states = () => r.agent.deviceStates.map((s) => s.state)
    expect(states()).toEqual(['waiting'])
    await rawRequest(r.port, 'GET', `/iclock/getrequest?SN=${SERIAL}`)
    expect(states()).toEqual(['waiting', 'connected'])
    clock += 91_000
    await until(() => states().length === 3)
    expect(r.agent.deviceStates.at(-1)).toMatchObject({
      state: 'disconnected',
      detail: 'no request from the terminal for 91 s',
    })
    await rawRequest(r.port, 'GET', `/iclock/getrequest?SN=${SERIAL}`)
    expect(states().at(-1)).toBe('connected')
  })
})

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  if (!condition()) throw new Error('condition never held')
}
