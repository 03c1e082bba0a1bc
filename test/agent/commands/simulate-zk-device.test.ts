/**
 * `hajri-agent simulate --zk-device PORT`: the command is a ZK terminal on PORT (TCP and UDP) that
 * punches by the same script as the other modes, and the agent's ZK client reads the punches back
 * from it: its log (40-, 16- and 8-byte records, records already there with --records, the user
 * table for 8-byte ones), a comm key, real-time events; and a real agent with a `zk` device pointed
 * at it stores them all. It keeps serving after the last punch until SIGINT or
 * SIGTERM, unless --exit-after-count; wrong usage exits 2 and listens on nothing.
 */
import { createServer } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { ZkClient, type ZkClientOptions } from '../../../agent/inputs/zk/zk-client.js'
import { ZkProtocolError } from '../../../agent/inputs/zk/zk-protocol-error.js'
import type { ZkAttendanceRecord } from '../../../agent/inputs/zk/zk-records.js'
import { formatZkWallTime } from '../../../agent/inputs/zk/zk-time.js'
import { runAgentCli, USAGE } from '../../../agent/main.js'
import { type RunningCli, startCli } from '../../support/cli-capture.js'
import { startSimulatorTestAgent } from '../simulator/simulator-test-agent.js'

const runs: RunningCli[] = []
const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  // A run still serving is stopped as Ctrl-C stops it.
  for (const run of runs.splice(0)) {
    process.emit('SIGTERM', 'SIGTERM')
    await run.done
  }
})

function simulate(args: string[]): RunningCli {
  const run = startCli(runAgentCli, ['simulate', ...args], { env: {}, cwd: process.cwd() })
  runs.push(run)
  return run
}

/** Polls `condition`, after `refresh` each time when given. */
async function until(
  condition: () => boolean,
  what: string,
  giveUpMs = 15_000,
  refresh?: () => Promise<void>,
): Promise<void> {
  const deadline = Date.now() + giveUpMs
  for (;;) {
    await refresh?.()
    if (condition()) return
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, refresh ? 100 : 10))
  }
}

/** The port the terminal printed it listens on. */
async function listeningPort(run: RunningCli): Promise<number> {
  const listens = () => /a ZK terminal listens on 127\.0\.0\.1:(\d+), TCP and UDP/.exec(run.stderr())
  await until(() => listens() !== null, 'the terminal to listen')
  return Number(listens()?.[1])
}

async function summary(run: RunningCli): Promise<Record<string, unknown>> {
  await until(() => run.stdout().includes('"event":"summary"'), 'the summary')
  return events(run).find((e) => e.event === 'summary') as Record<string, unknown>
}

function events(run: RunningCli): Record<string, unknown>[] {
  return run
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line))
}

/** The printed punches as a terminal keeps them: PIN, local wall time, status (0 IN, 1 OUT). */
function printedPunches(run: RunningCli): string[] {
  return events(run)
    .filter((e) => e.event === 'punch')
    .map((e) => `${e.employeeCode} ${String(e.punchedAt).slice(0, 19)} ${e.punchType === 'IN' ? 0 : 1}`)
}

function recordKey(record: ZkAttendanceRecord, pinOfUid = new Map<number, string>()): string {
  return `${record.userId ?? pinOfUid.get(record.uid as number)} ${formatZkWallTime(record.time)} ${record.state}`
}

async function connect(port: number, options: Partial<ZkClientOptions> = {}): Promise<ZkClient> {
  const client = await ZkClient.connect({ host: '127.0.0.1', port, requestTimeoutMs: 5000, ...options })
  cleanups.push(() => client.close())
  return client
}

async function stopWith(run: RunningCli, signal: 'SIGINT' | 'SIGTERM'): Promise<number> {
  runs.splice(runs.indexOf(run), 1)
  process.emit(signal, signal)
  return run.done
}

async function expectGone(port: number): Promise<void> {
  const error = await ZkClient.connect({
    host: '127.0.0.1',
    port,
    transport: 'tcp',
    connectTimeoutMs: 2000,
  }).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ZkProtocolError)
  expect((error as ZkProtocolError).code).toBe('zk_unreachable')
}

describe('hajri-agent simulate --zk-device', () => {
  it('makes the punches at the terminal, serves them over TCP and UDP, and keeps serving until SIGINT', async () => {
    const run = simulate(['--zk-device', '0', '--count', '6', '--employees', 'E001,E002,E003', '--json'])
    const port = await listeningPort(run)
    expect(await summary(run)).toMatchObject({ sent: 6, acknowledged: 6 })
    const printed = printedPunches(run)
    expect(printed).toHaveLength(6)
    await until(() => run.stderr().includes('keeps serving its log until Ctrl-C'), 'the serving notice')

    for (const transport of ['tcp', 'udp'] as const) {
      const client = await connect(port, { transport })
      expect(await client.readDeviceInfo()).toMatchObject({ serialNumber: expect.any(String) })
      const read = await client.readAttendance()
      expect(read.recordBytes).toBe(40)
      expect(read.malformed).toEqual([])
      expect(read.records.map((r) => recordKey(r))).toEqual(printed)
      await client.close()
    }

    expect(await stopWith(run, 'SIGINT')).toBe(0)
    await expectGone(port)
    expect(run.stderr()).toMatch(/40-byte records, no comm key, 0 record\(s\) in its log/)
  })

  it('an old terminal (8-byte records) with a log already, a comm key and a serial number: the uid maps to the PIN through its users', async () => {
    const run = simulate([
      '--zk-device',
      '0',
      '--record-size',
      '8',
      '--records',
      '50',
      '--comm-key',
      '45',
      '--serial-number',
      'SIM-ZK-8',
      '--employees',
      '11,12,13',
      '--count',
      '3',
      '--json',
    ])
    const port = await listeningPort(run)
    await summary(run)
    const client = await connect(port, { transport: 'udp', commKey: 45 })
    expect(await client.readDeviceInfo()).toMatchObject({ serialNumber: 'SIM-ZK-8' })
    const users = await client.readUsers()
    expect(users.map((u) => u.userId).sort()).toEqual(['11', '12', '13'])
    const pinOfUid = new Map(users.map((u) => [u.uid, u.userId]))
    const read = await client.readAttendance()
    expect(read.recordBytes).toBe(8)
    expect(read.records).toHaveLength(53)
    const keys = read.records.map((r) => recordKey(r, pinOfUid))
    // The log it had: the employees in turn, a minute apart, each alternating IN and OUT.
    expect(keys.slice(0, 6).map((k) => k.split(' ')[0])).toEqual(['11', '12', '13', '11', '12', '13'])
    expect(keys.slice(0, 6).map((k) => k.split(' ')[2])).toEqual(['0', '0', '0', '1', '1', '1'])
    expect(keys.slice(50)).toEqual(printedPunches(run))
    // Last: the refused client's connection may still be closing when the next one asks for a session.
    await client.close()
    const wrongKey = await ZkClient.connect({ host: '127.0.0.1', port, transport: 'tcp', commKey: 44 }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect((wrongKey as ZkProtocolError).code).toBe('zk_auth_refused')

    expect(await stopWith(run, 'SIGTERM')).toBe(0)
  })

  it('a terminal of 16-byte records punches numeric PINs (1 to 5 unless told)', async () => {
    const run = simulate(['--zk-device', '0', '--record-size', '16', '--count', '4', '--json'])
    const port = await listeningPort(run)
    await summary(run)
    const printed = printedPunches(run)
    for (const punch of printed) expect(['1', '2', '3', '4', '5']).toContain(punch.split(' ')[0])
    const client = await connect(port, { transport: 'tcp' })
    const read = await client.readAttendance()
    expect(read.recordBytes).toBe(16)
    expect(read.records.map((r) => recordKey(r))).toEqual(printed)
  })

  it('reports each punch as it happens to a client registered for events', async () => {
    const run = simulate([
      '--zk-device',
      '0',
      '--rate',
      '4',
      '--count',
      '8',
      '--employees',
      'E001,E002,E003,E004,E005,E006,E007,E008',
      '--json',
    ])
    const port = await listeningPort(run)
    const heard: string[] = []
    const client = await connect(port, {
      transport: 'tcp',
      onEvent: (event) => {
        if (event.type === 'attlog')
          heard.push(`${event.attlog.userId} ${formatZkWallTime(event.attlog.time)} ${event.attlog.state}`)
      },
    })
    await client.registerEvents()
    await summary(run)
    const printed = printedPunches(run)
    await until(() => heard.at(-1) === printed.at(-1), 'the last punch as an event')
    // Those made before the client registered are in the log, not heard.
    expect(printed.slice(printed.length - heard.length)).toEqual(heard)
    expect((await client.readAttendance()).records.map((r) => recordKey(r))).toEqual(printed)
  })

  it('an agent with a zk device pointed at it stores every punch, those of its old log included', async () => {
    const run = simulate([
      '--zk-device',
      '0',
      '--record-size',
      '8',
      '--records',
      '20',
      '--comm-key',
      '45',
      '--employees',
      '11,12,13',
      '--count',
      '5',
      '--json',
    ])
    const port = await listeningPort(run)
    await summary(run)
    const agent = await startSimulatorTestAgent({
      devices: [
        {
          id: 'bench-terminal',
          zk: { host: '127.0.0.1', port, commKey: 45, transport: 'udp' },
          pin: { prefix: 'E', width: 3 },
        },
      ],
    })
    cleanups.push(() => agent.stop())
    let stored: Awaited<ReturnType<typeof agent.punches>> = []
    await until(
      () => stored.length >= 25,
      'the agent to store 25 punches',
      20_000,
      async () => {
        stored = await agent.punches()
      },
    )
    expect(stored).toHaveLength(25)
    expect(new Set(stored.map((p) => p.deviceId))).toEqual(new Set(['bench-terminal']))
    expect(new Set(stored.map((p) => p.employeeCode))).toEqual(new Set(['E011', 'E012', 'E013']))
    const printed = events(run)
      .filter((e) => e.event === 'punch')
      .map(
        (e) =>
          `E${String(e.employeeCode).padStart(3, '0')} ${e.punchType} ${Date.parse(String(e.punchedAt))}`,
      )
    const keys = stored.map((p) => `${p.employeeCode} ${p.punchType} ${Date.parse(p.punchedAt)}`)
    for (const punch of printed) expect(keys).toContain(punch)
    expect(await agent.deadLettered()).toEqual([])
  })

  it('--exit-after-count: exits 0 once the punches are made, and is no longer there', async () => {
    const run = simulate(['--zk-device', '0', '--count', '2', '--exit-after-count'])
    const port = await listeningPort(run)
    expect(await run.done).toBe(0)
    runs.splice(runs.indexOf(run), 1)
    expect(run.stdout()).toMatch(/^summary: 2 sent, 2 written in /m)
    expect(run.stdout().match(/^sent E00\d (IN|OUT) \S+ \(written\)$/gm)).toHaveLength(2)
    expect(run.stderr()).not.toContain('keeps serving')
    await expectGone(port)
  })

  it('a port it cannot listen on: exit 1, one line', async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => new Promise((resolve) => taken.close(resolve)))
    const port = (taken.address() as { port: number }).port
    const run = simulate(['--zk-device', String(port)])
    expect(await run.done).toBe(1)
    runs.splice(runs.indexOf(run), 1)
    expect(run.stdout()).toBe('')
    expect(run.stderr()).toMatch(
      new RegExp(`^hajri-agent: cannot listen on 127\\.0\\.0\\.1:${port} \\(TCP and UDP\\): [^\\n]+\\n$`),
    )
  })
})

describe('hajri-agent simulate --zk-device: wrong usage', () => {
  const cases: [string, string[], RegExp][] = [
    [
      'with --mqtt',
      ['--zk-device', '4370', '--mqtt', 'mqtt://127.0.0.1:1'],
      /give one of --mqtt URL .* or --zk-device PORT/,
    ],
    ['with --adms', ['--zk-device', '4370', '--adms', 'http://127.0.0.1:1'], /give one of/],
    [
      'a port that is none',
      ['--zk-device', '70000'],
      /--zk-device PORT must be a whole number from 0 to 65535/,
    ],
    ['a port that is no number', ['--zk-device', 'gate-1'], /--zk-device PORT must be a whole number/],
    [
      'a record size the protocol has not',
      ['--zk-device', '0', '--record-size', '12'],
      /--record-size must be 40, 16 or 8/,
    ],
    [
      'a comm key that is no number',
      ['--zk-device', '0', '--comm-key', 'secret'],
      /--comm-key must be a whole number from 0 to 999999/,
    ],
    [
      'more records than the log holds',
      ['--zk-device', '0', '--records', '100001'],
      /--records must be a whole number from 0 to 100000/,
    ],
    [
      'records and punches past the log',
      ['--zk-device', '0', '--records', '99999', '--count', '2'],
      /--records 99999 and --count 2 are more than the 100000 records/,
    ],
    [
      'a text PIN on a 16-byte terminal',
      ['--zk-device', '0', '--record-size', '16', '--employees', 'E001'],
      /16-byte records keeps numeric PINs .*not "E001"/,
    ],
    [
      'a PIN with a leading zero on an 8-byte terminal',
      ['--zk-device', '0', '--record-size', '8', '--employees', '007'],
      /no leading zero\), not "007"/,
    ],
    [
      'a PIN past a u32',
      ['--zk-device', '0', '--record-size', '16', '--employees', '4294967296'],
      /not "4294967296"/,
    ],
    [
      'a PIN longer than 24',
      ['--zk-device', '0', '--employees', 'A'.repeat(25)],
      /longer than the 24 characters/,
    ],
    [
      '--exit-after-count with no count to reach',
      ['--zk-device', '0', '--every', '20s', '--exit-after-count'],
      /--exit-after-count needs --count N/,
    ],
    ['a format', ['--zk-device', '0', '--format', 'json'], /--format is not for --zk-device/],
    ['a topic', ['--zk-device', '0', '--topic', 't'], /--topic is for --mqtt/],
    ['a baud rate', ['--zk-device', '0', '--baud-rate', '9600'], /--baud-rate is for --serial/],
    [
      'a host that is none',
      ['--zk-device', '0', '--host', '0.0.0.0; rm'],
      /--host must be an IP address or host name/,
    ],
    [
      'a serial number that is none',
      ['--zk-device', '0', '--serial-number', 'SN 1'],
      /--serial-number must be letters, digits/,
    ],
    [
      '--record-size without --zk-device',
      ['--mqtt', 'mqtt://127.0.0.1:1', '--record-size', '8'],
      /--record-size is for --zk-device/,
    ],
    [
      '--host without --zk-device',
      ['--adms', 'http://127.0.0.1:1', '--serial-number', 'SN1', '--host', '::'],
      /--host is for --zk-device/,
    ],
    [
      '--exit-after-count without --zk-device',
      ['--serial', '/dev/ttyUSB0', '--exit-after-count'],
      /--exit-after-count is for --zk-device/,
    ],
    [
      'more punches a second than seconds can tell apart',
      ['--zk-device', '0', '--rate', '6'],
      /5 employee\(s\) cannot make that many punches: .* a lower --rate or --count$/m,
    ],
  ]
  it.each(cases)('%s: exit 2 with the usage text, listening on nothing', async (_, args, message) => {
    const run = simulate(args)
    expect(await run.done).toBe(2)
    runs.splice(runs.indexOf(run), 1)
    expect(run.stdout()).toBe('')
    const [first, ...rest] = run.stderr().split('\n\n')
    expect(first).toMatch(/^hajri-agent: /)
    expect(first).toMatch(message)
    expect(rest.join('\n\n')).toBe(`${USAGE}\n`)
  })
})
