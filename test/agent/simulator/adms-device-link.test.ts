/**
 * `hajri-agent simulate --adms URL --serial-number SN` and its AdmsDeviceLink, against the test's
 * own ADMS server (adms-test-server.ts): a punch counts as acknowledged only once its batch is
 * answered `OK: n`, a serial number the server refuses ends the run at once with one line, and
 * the server gets the ATTLOG lines the run printed.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { AdmsDeviceLink } from '../../../agent/simulator/adms-device-link.js'
import { DeviceUnreachableError, RecordNotDeliveredError } from '../../../agent/simulator/device-link.js'
import { formatInZone, parseTimestamp } from '../../../shared/time.js'
import { AdmsTestServer, isHandshake, isUpload } from './adms-test-server.js'
import { cliInProcess } from './simulator-test-agent.js'

const SN = 'CGXH201360036'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function server(configure?: (s: AdmsTestServer) => void) {
  const s = new AdmsTestServer()
  configure?.(s)
  const url = await s.start()
  cleanups.push(() => s.close())
  return { server: s, url }
}

function link(url: string, options: Partial<ConstructorParameters<typeof AdmsDeviceLink>[0]> = {}) {
  const notices: string[] = []
  const l = new AdmsDeviceLink({
    url,
    serialNumber: SN,
    notice: (m) => notices.push(m),
    device: { timeScale: 0.01 },
    ...options,
  })
  cleanups.push(() => l.close())
  return { link: l, notices }
}

/** `hajri-agent ARGS` in this process. */
async function cli(args: string[]) {
  const run = cliInProcess(args)
  return { code: await run.done, stdout: run.stdout(), stderr: run.stderr() }
}

describe('AdmsDeviceLink', () => {
  it('delivers a record once its batch is answered OK: n', async () => {
    const { server: s, url } = await server((s) => {
      s.uploadReplies = ['503']
    })
    const { link: l } = link(url)
    expect(l.target).toBe(`${url} (serial number ${SN})`)
    expect(l.deliveredAs).toBe('acknowledged')
    await l.open()
    await l.send('E001\t2026-11-21 09:00:00\t0\t1\t0')
    expect(s.uploads().map((u) => u.lines)).toEqual([
      ['E001\t2026-11-21 09:00:00\t0\t1\t0\t0\t0'],
      ['E001\t2026-11-21 09:00:00\t0\t1\t0\t0\t0'],
    ])
  })

  it('a refused serial number: DeviceUnreachableError saying so, and nothing left running', async () => {
    const { server: s, url } = await server((s) => {
      s.handshakeStatus = 403
      s.handshakeBody = 'unknown device'
    })
    const { link: l } = link(url)
    const opened = l.open()
    await expect(opened).rejects.toBeInstanceOf(DeviceUnreachableError)
    await expect(opened).rejects.toThrow(
      `the agent at ${url} refused serial number ${SN} (HTTP 403: unknown device); ` +
        'is a device with that serial number in its configuration?',
    )
    expect(s.requests).toHaveLength(1)
  })

  it('nothing listening: DeviceUnreachableError with the connection error', async () => {
    const { server: s, url } = await server()
    await s.close()
    const { link: l } = link(url)
    await expect(l.open()).rejects.toThrow(
      new RegExp(`^cannot reach the agent's ADMS listener at ${url}: connect ECONNREFUSED`),
    )
  })

  it('close(): records not acknowledged reject with RecordNotDeliveredError', async () => {
    const { server: s, url } = await server((s) => {
      s.uploadDefault = '503'
    })
    const { link: l, notices } = link(url)
    await l.open()
    const sent = l.send('E001\t2026-11-21 09:00:00\t0\t1\t0')
    // The second post comes after the device has read the first failure.
    await s.count(isUpload, 2)
    await l.close()
    await expect(sent).rejects.toBeInstanceOf(RecordNotDeliveredError)
    await expect(sent).rejects.toThrow('the device was stopped before the record was acknowledged')
    // One notice for the outage, with the first failure.
    expect(notices).toEqual([
      expect.stringMatching(/failed: HTTP 503: Service Unavailable; trying again every 1 s$/),
    ])
  })

  it('says when the agent’s TimeZone for the device is not the zone the punches are written in', async () => {
    const { url } = await server((s) => {
      s.options.TimeZone = '8'
    })
    const { link: l, notices } = link(url, { timeZone: 'Asia/Kolkata' })
    await l.open()
    expect(notices).toEqual([
      'the agent gives this device TimeZone UTC+08:00, but punches are written in Asia/Kolkata (UTC+05:30): ' +
        'the agent will read their times wrong; give --time-zone to match',
    ])
  })
})

describe('hajri-agent simulate --adms', () => {
  it('uploads every punch as ATTLOG; each printed acknowledged was answered OK: n', async () => {
    const { server: s, url } = await server()
    const run = await cli(['simulate', '--adms', url, '--serial-number', SN, '--count', '4', '--json'])
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const printed = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(printed.at(-1)).toMatchObject({ event: 'summary', sent: 4, acknowledged: 4 })
    const punches = printed.filter((e) => e.event === 'punch')
    expect(s.requests[0]?.query.get('SN')).toBe(SN)
    expect(s.requests.filter(isHandshake)).toHaveLength(1)
    // The lines the server got: the punches printed, in Asia/Kolkata wall time, IN 0 and OUT 1.
    const received = s.uploads().flatMap((u) => u.lines.map((line) => line.split('\t')))
    const asLines = punches.map((p) => [
      p.employeeCode,
      formatInZone(parseTimestamp(p.punchedAt)!, 'Asia/Kolkata').slice(0, 19).replace('T', ' '),
      p.punchType === 'IN' ? '0' : '1',
    ])
    expect(received.map((f) => f.slice(0, 3)).sort()).toEqual(asLines.sort())
    expect(received.every((f) => f.length === 7)).toBe(true)
  })

  it('a serial number the agent refuses: exit 1 with one line, no punch sent', async () => {
    const { server: s, url } = await server((s) => {
      s.handshakeStatus = 403
    })
    const run = await cli(['simulate', '--adms', url, '--serial-number', 'NOPE1'])
    expect(run.code).toBe(1)
    expect(run.stdout).toBe('')
    expect(run.stderr).toBe(
      `hajri-agent: the agent at ${url} refused serial number NOPE1 (HTTP 403: Forbidden); ` +
        'is a device with that serial number in its configuration?\n',
    )
    expect(s.requests.filter(isUpload)).toEqual([])
  })
})
