/**
 * `hajri-agent simulate` as a person or a script runs it. Wrong usage exits 2 with the usage
 * text and connects to nothing; a broker or port that cannot be reached exits 1 with one line; a run
 * without --count stops cleanly on SIGINT or SIGTERM (the punch in flight finished, the summary
 * printed, exit 0), with every punch it reported acknowledged in the agent's spool.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { USAGE } from '../../../agent/main.js'
import { parseTimestamp } from '../../../shared/time.js'
import { freePort } from '../../support/e2e-kit.js'
import {
  cliInProcess,
  hajriAgent,
  jsonPunchLines,
  killChildren,
  startSimulatorTestAgent,
  until,
} from '../simulator/simulator-test-agent.js'

let dir: string
let passwordFile: string
/** A broker address where nothing listens: a usage check that let a call through would exit 1, not 2. */
let nowhere: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hajri-simulate-cli-'))
  passwordFile = join(dir, 'gate.pass')
  await writeFile(passwordFile, 's3cret\n')
  nowhere = `mqtt://127.0.0.1:${await freePort()}`
})
afterAll(() => rm(dir, { recursive: true, force: true }))
/** The same free port, as an ADMS listener's address. */
const admsNowhere = () => nowhere.replace(/^mqtt:/, 'http:')

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  killChildren()
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe('hajri-agent simulate: wrong usage', () => {
  const cases: [string, () => string[], RegExp][] = [
    ['no transport', () => [], /give one of --mqtt URL or --serial PATH/],
    [
      'both transports',
      () => ['--mqtt', nowhere, '--serial', '/dev/ttyUSB0'],
      /give one of --mqtt URL or --serial PATH/,
    ],
    [
      'a URL that is not one',
      () => ['--mqtt', '127.0.0.1:1883'],
      /is not a URL such as mqtt:\/\/127\.0\.0\.1:1883/,
    ],
    [
      'a URL of another scheme',
      () => ['--mqtt', 'http://127.0.0.1:1883'],
      /must be an mqtt:\/\/ or mqtts:\/\/ URL/,
    ],
    [
      'a password in the URL',
      () => ['--mqtt', 'mqtt://gate-1:hunter2@127.0.0.1:1883'],
      /--password-file\), not in the URL/,
    ],
    [
      'a wildcard topic',
      () => ['--mqtt', nowhere, '--topic', 'punches/+'],
      /--topic must be a topic name without \+ or #/,
    ],
    ['CSV over MQTT', () => ['--mqtt', nowhere, '--format', 'csv'], /--format csv is for --serial/],
    [
      'an unknown format',
      () => ['--mqtt', nowhere, '--format', 'xml'],
      /--format must be one of json, zk-attlog, csv/,
    ],
    [
      'a baud rate over MQTT',
      () => ['--mqtt', nowhere, '--baud-rate', '9600'],
      /--baud-rate is for --serial/,
    ],
    ['a topic over serial', () => ['--serial', '/dev/ttyUSB0', '--topic', 't'], /--topic is for --mqtt/],
    [
      'a bad baud rate',
      () => ['--serial', '/dev/ttyUSB0', '--baud-rate', 'fast'],
      /--baud-rate must be a whole number/,
    ],
    [
      'a password without a user',
      () => ['--mqtt', nowhere, '--password-file', passwordFile],
      /--password-file needs --username/,
    ],
    [
      'a password file that is not there',
      () => ['--mqtt', nowhere, '--username', 'u', '--password-file', join(dir, 'missing')],
      /--password-file names a file that does not exist/,
    ],
    ['a count of 0', () => ['--mqtt', nowhere, '--count', '0'], /--count must be a whole number from 1/],
    [
      'a count that is no number',
      () => ['--mqtt', nowhere, '--count', 'ten'],
      /--count must be a whole number/,
    ],
    ['a duration that is none', () => ['--mqtt', nowhere, '--every', 'soon'], /--every must be a duration/],
    [
      'a zero duration',
      () => ['--mqtt', nowhere, '--every', '0s'],
      /--every must be a duration of at least 1 s/,
    ],
    [
      'a zero rate',
      () => ['--mqtt', nowhere, '--rate', '0'],
      /--rate must be a number of punches per second/,
    ],
    ['a negative rate', () => ['--mqtt', nowhere, '--rate=-5'], /--rate must be a number/],
    [
      'both paces',
      () => ['--mqtt', nowhere, '--every', '20s', '--rate', '5'],
      /give --every or --rate, not both/,
    ],
    [
      'an empty employee code',
      () => ['--mqtt', nowhere, '--employees', 'E001,,E002'],
      /--employees: "" is not an employee code/,
    ],
    [
      'an employee code with a space',
      () => ['--mqtt', nowhere, '--employees', 'E 1'],
      /"E 1" is not an employee code/,
    ],
    [
      'an unknown time zone',
      () => ['--mqtt', nowhere, '--time-zone', 'Mars/Olympus'],
      /"Mars\/Olympus" is not an IANA time zone/,
    ],
    [
      'more punches a second than ATTLOG can tell apart for the employees',
      () => ['--mqtt', nowhere, '--format', 'zk-attlog', '--rate', '6'],
      /5 employee\(s\) cannot make that many punches: zk-attlog writes times to the second.*or --format json$/m,
    ],
    [
      'a burst that would date punches minutes ahead',
      () => ['--serial', '/dev/ttyUSB0', '--count', '1000'],
      /cannot make that many punches/,
    ],
    [
      'an ADMS URL without a serial number',
      () => ['--adms', admsNowhere()],
      /--adms needs --serial-number SN/,
    ],
    [
      'a serial number without --adms',
      () => ['--mqtt', nowhere, '--serial-number', 'CGXH201360036'],
      /--serial-number is for --adms/,
    ],
    [
      'a serial number that is none',
      () => ['--adms', admsNowhere(), '--serial-number', 'SN 1'],
      /--serial-number must be letters, digits/,
    ],
    ['ADMS and MQTT both', () => ['--adms', admsNowhere(), '--mqtt', nowhere], /give one of --mqtt URL/],
    [
      'an ADMS URL that is not one',
      () => ['--adms', '127.0.0.1:8081', '--serial-number', 'SN1'],
      /--adms "127\.0\.0\.1:8081" is not a URL such as http:\/\/127\.0\.0\.1:8081/,
    ],
    [
      'an ADMS URL of another scheme',
      () => ['--adms', nowhere, '--serial-number', 'SN1'],
      /--adms must be an http:\/\/ or https:\/\/ URL/,
    ],
    [
      'an ADMS URL with a path',
      () => ['--adms', `${admsNowhere()}/iclock/cdata`, '--serial-number', 'SN1'],
      /without a path: the device adds \/iclock\//,
    ],
    [
      'a password in the ADMS URL',
      () => ['--adms', 'http://gate-1:hunter2@127.0.0.1:8081', '--serial-number', 'SN1'],
      /--adms takes no user or password/,
    ],
    [
      'JSON over ADMS',
      () => ['--adms', admsNowhere(), '--serial-number', 'SN1', '--format', 'json'],
      /--adms uploads ATTLOG records: --format must be zk-attlog/,
    ],
    [
      'a topic over ADMS',
      () => ['--adms', admsNowhere(), '--serial-number', 'SN1', '--topic', 't'],
      /--topic is for --mqtt/,
    ],
    [
      'a baud rate over ADMS',
      () => ['--adms', admsNowhere(), '--serial-number', 'SN1', '--baud-rate', '9600'],
      /--baud-rate is for --serial/,
    ],
    [
      'more punches a second than ATTLOG can tell apart, over ADMS (which has no JSON to offer)',
      () => ['--adms', admsNowhere(), '--serial-number', 'SN1', '--rate', '6'],
      /cannot make that many punches: zk-attlog writes times to the second.*a lower --rate or --count$/m,
    ],
    ['an unknown option', () => ['--mqtt', nowhere, '--qos', '2'], /--qos/],
    ['a stray argument', () => ['--mqtt', nowhere, 'now'], /now/],
  ]
  for (const [name, args, message] of cases) {
    it(`${name}: exit 2 with the usage text`, async () => {
      const run = cliInProcess(['simulate', ...args()])
      expect(await run.done).toBe(2)
      expect(run.stdout()).toBe('')
      const [first, ...rest] = run.stderr().split('\n\n')
      expect(first).toMatch(/^hajri-agent: /)
      expect(first).toMatch(message)
      expect(first).not.toContain('hunter2')
      expect(rest.join('\n\n')).toBe(`${USAGE}\n`)
    })
  }

  it('is in the usage text', () => {
    expect(USAGE).toContain('hajri-agent simulate (--mqtt URL')
    expect(USAGE).toContain('[--every DURATION | --rate N]')
  })
})

describe('hajri-agent simulate: nothing to connect to', () => {
  it('a broker that cannot be reached: exit 1, one line, no stack', async () => {
    const run = hajriAgent(['simulate', '--mqtt', nowhere])
    expect(await run.exited).toEqual({ code: 1, signal: null })
    expect(run.stdout()).toBe('')
    expect(run.stderr()).toBe(
      `hajri-agent: cannot connect to the MQTT broker at ${nowhere}: connect ECONNREFUSED ${nowhere.slice(7)}\n`,
    )
  })

  it('a serial port that is not there: exit 1, one line', async () => {
    const path = join(dir, 'no-such-tty')
    const run = cliInProcess(['simulate', '--serial', path])
    expect(await run.done).toBe(1)
    expect(run.stdout()).toBe('')
    expect(run.stderr()).toMatch(new RegExp(`^hajri-agent: cannot open the serial port ${path}: [^\\n]+\\n$`))
  })
})

describe('hajri-agent simulate: stopping a run without --count', () => {
  async function agent() {
    const started = await startSimulatorTestAgent({
      mqtt: { users: [{ username: 'gate-1', password: 's3cret' }] },
      devices: [{ id: 'gate-1', mqtt: { topic: 'punches/gate-1', format: 'json', username: 'gate-1' } }],
    })
    cleanups.push(() => started.stop())
    const login = ['--topic', 'punches/gate-1', '--username', 'gate-1', '--password-file', passwordFile]
    return { started, args: ['--mqtt', started.mqttUrl as string, ...login] }
  }

  it('--every: SIGINT ends the run with the summary, exit 0', async () => {
    const { started, args } = await agent()
    const run = hajriAgent(['simulate', ...args, '--every', '1s'])
    await until(() => run.stdout().split('(acknowledged)').length > 2, 'two punches acknowledged')
    run.child.kill('SIGINT')
    expect(await run.exited).toEqual({ code: 0, signal: null })
    expect(run.stderr()).toMatch(
      /^hajri-agent simulate: a punch every 1 s or so to mqtt:\/\/127\.0\.0\.1:\d+ \(topic punches\/gate-1\) as json; Ctrl-C stops\n/,
    )
    const lines = run.stdout().trimEnd().split('\n')
    const punches = lines.slice(0, -1).map((line) => {
      const m = /^sent (E00[1-5]) (IN|OUT) (\S+) \(acknowledged\)$/.exec(line)
      if (!m) throw new Error(`unexpected line ${line}`)
      return `${m[1]} ${m[2]} ${parseTimestamp(m[3]!)}`
    })
    expect(lines.at(-1)).toMatch(
      new RegExp(`^summary: ${punches.length} sent, ${punches.length} acknowledged in `),
    )
    const spooled = await started.punches()
    expect(
      spooled.map((p) => `${p.employeeCode} ${p.punchType} ${parseTimestamp(p.punchedAt)}`).sort(),
    ).toEqual(punches.sort())
  })

  it('--rate: SIGTERM stops a load test; every punch it counted is in the spool', async () => {
    const { started, args } = await agent()
    const run = hajriAgent(['simulate', ...args, '--rate', '5', '--json'])
    await until(() => jsonPunchLines(run.stdout()).length >= 3, 'three punches acknowledged')
    run.child.kill('SIGTERM')
    expect(await run.exited).toEqual({ code: 0, signal: null })
    const events = run
      .stdout()
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
    const summary = events.at(-1)
    expect(summary).toMatchObject({ event: 'summary', sent: expect.any(Number) })
    expect(summary.acknowledged).toBe(summary.sent)
    const printed = jsonPunchLines(run.stdout())
    expect(printed).toHaveLength(summary.sent)
    expect((await started.punches()).map((p) => p.id)).toHaveLength(summary.sent)
  })
})
