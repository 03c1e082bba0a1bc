import { parseArgs } from 'node:util'
import { parseDuration } from '../../shared/duration.js'
import { EMPLOYEE_CODE_PATTERN } from '../../shared/employee.js'
import { isValidTimeZone } from '../../shared/time.js'
import { readSecretFile } from '../config/secret-files.js'
import type { DeviceLink } from '../simulator/device-link.js'
import {
  deviceRecord,
  FORMAT_RESOLUTION_MICROS,
  SIMULATOR_FORMATS,
  type SimulatorFormat,
} from '../simulator/device-record.js'
import { PunchScript, punchLeadMicros } from '../simulator/punch-script.js'
import { type Pace, runSimulation } from '../simulator/simulation.js'
import { SimulationReport } from '../simulator/simulation-report.js'
import type { ZkDeviceLink } from '../simulator/zk-device-link.js'
import { type AgentCommand, AgentUsageError } from './agent-command.js'

const OPTIONS = {
  mqtt: { type: 'string' },
  topic: { type: 'string' },
  username: { type: 'string' },
  'password-file': { type: 'string' },
  serial: { type: 'string' },
  'baud-rate': { type: 'string' },
  adms: { type: 'string' },
  'serial-number': { type: 'string' },
  format: { type: 'string' },
  employees: { type: 'string' },
  count: { type: 'string' },
  every: { type: 'string' },
  rate: { type: 'string' },
  'time-zone': { type: 'string' },
  json: { type: 'boolean' },
  'zk-device': { type: 'string' },
  host: { type: 'string' },
  'record-size': { type: 'string' },
  'comm-key': { type: 'string' },
  records: { type: 'string' },
  'exit-after-count': { type: 'boolean' },
} as const

const DEFAULT_SIMULATOR_TOPIC = 'punches/simulator'
const DEFAULT_EMPLOYEES = ['E001', 'E002', 'E003', 'E004', 'E005']
/** Above this --rate, progress lines every few seconds instead of a line per punch. */
const MAX_RATE_WITH_LINES = 10
/** Punches dated this far ahead of the clock would be a device with a wrong clock to the agent. */
const MAX_LEAD_SECONDS = 60
const EMPLOYEE_CODE = new RegExp(EMPLOYEE_CODE_PATTERN)
/** Terminal serial numbers are letters and digits (CGXH201360036); "-" and "_" for test devices. */
const SERIAL_NUMBER = /^[A-Za-z0-9_-]{1,32}$/
/** Employees of a terminal with numeric PINs (--record-size 16 or 8), when --employees is not given. */
const DEFAULT_NUMERIC_EMPLOYEES = ['1', '2', '3', '4', '5']
/** The simulated ZK terminal's log holds this many records; a punch past it is not written. */
const ZK_RECORD_CAPACITY = 100_000
/** ZK protocol: a text PIN (40-byte records) is 24 bytes; a numeric one (16 and 8) a u32. */
const ZK_TEXT_PIN_LENGTH = 24
const ZK_NUMERIC_PIN = /^[1-9]\d{0,9}$/
const ZK_MAX_NUMERIC_PIN = 0xffff_ffff
/** The same rule as a `zk` device's host in agent.yaml. */
const LISTEN_HOST = /^[A-Za-z0-9.:_-]{1,253}$/

function parseValues(args: readonly string[]) {
  return parseArgs({ args: [...args], options: OPTIONS }).values
}

type Values = ReturnType<typeof parseValues>

interface LinkChoice {
  format: SimulatorFormat
  /** `timeZone`: the zone the records are written in. */
  create: (notice: (message: string) => void, timeZone: string) => Promise<DeviceLink>
  /** Who punches, when the link has rules of its own for them (a ZK terminal's PINs). */
  employees?: string[]
  /** When the link is the device itself (--zk-device), which the agent connects to. */
  device?: DeviceChoice
}

/**
 * A simulated device the agent reads (a ZK terminal): still there once the punches are done, since
 * a device does not go away when nobody punches, until Ctrl-C or --exit-after-count.
 */
interface DeviceChoice {
  /** Records in its log before the first punch, and how many it holds. */
  records: number
  capacity: number
  exitAfterCount: boolean
  /** Takes the device off the network (after its link is closed, or if it never opened). */
  stop: () => Promise<void>
}

/** Refuses the options of another transport than the one given. */
function refuseOthers(values: Values, options: readonly (keyof Values)[], owner: string): void {
  for (const option of options) {
    if (values[option] !== undefined) throw new AgentUsageError(`--${option} is for ${owner}`)
  }
}

const MQTT_ONLY = ['topic', 'username', 'password-file'] as const
const ZK_ONLY = ['host', 'record-size', 'comm-key', 'records', 'exit-after-count'] as const

function positiveInteger(name: string, text: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(text)
  if (!/^\d+$/.test(text) || n < 1 || n > max)
    throw new AgentUsageError(`${name} must be a whole number from 1 to ${max}`)
  return n
}

function wholeNumber(name: string, text: string, max: number, hint = ''): number {
  const n = Number(text)
  if (!/^\d+$/.test(text) || n > max)
    throw new AgentUsageError(`${name} must be a whole number from 0 to ${max}${hint}`)
  return n
}

function employees(text: string | undefined, fallback: string[] = DEFAULT_EMPLOYEES): string[] {
  if (text === undefined) return fallback
  const codes = text.split(',').map((code) => code.trim())
  for (const code of codes) {
    if (!EMPLOYEE_CODE.test(code))
      throw new AgentUsageError(
        `--employees: "${code.slice(0, 70)}" is not an employee code (letters, digits, ".", "_", "-"; up to 64)`,
      )
  }
  return [...new Set(codes)]
}

function pace(values: Values): Pace {
  if (values.every !== undefined && values.rate !== undefined)
    throw new AgentUsageError('give --every or --rate, not both')
  if (values.every !== undefined) {
    const seconds = parseDuration(values.every)
    if (!seconds)
      throw new AgentUsageError('--every must be a duration of at least 1 s, such as 20s, 1m or 2h')
    return { kind: 'every', seconds }
  }
  if (values.rate !== undefined) {
    const perSecond = Number(values.rate)
    if (!/^\d+(\.\d+)?$/.test(values.rate) || perSecond <= 0 || perSecond > 1_000_000)
      throw new AgentUsageError('--rate must be a number of punches per second, above 0 and up to 1000000')
    return { kind: 'rate', perSecond }
  }
  return { kind: 'burst' }
}

function format(values: Values, fallback: SimulatorFormat): SimulatorFormat {
  const name = values.format ?? fallback
  if (!(SIMULATOR_FORMATS as readonly string[]).includes(name))
    throw new AgentUsageError(`--format must be one of ${SIMULATOR_FORMATS.join(', ')}`)
  return name as SimulatorFormat
}

/**
 * The URL of --mqtt or --adms, or a usage error: a URL of one of `protocols` (`mqtt:`), without a
 * user or password in it (`credentials` says where they go instead).
 */
function linkUrl(
  option: string,
  url: string,
  example: string,
  protocols: string[],
  credentials: string,
): URL {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new AgentUsageError(`${option} "${url}" is not a URL such as ${example}`)
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new AgentUsageError(`${option} must be an ${protocols.map((p) => `${p}//`).join(' or ')} URL`)
  }
  if (parsed.username || parsed.password) throw new AgentUsageError(credentials)
  return parsed
}

async function mqttLink(values: Values, url: string): Promise<LinkChoice> {
  refuseOthers(values, ['baud-rate'], '--serial')
  linkUrl(
    '--mqtt',
    url,
    'mqtt://127.0.0.1:1883',
    ['mqtt:', 'mqtts:'],
    'give the user with --username and the password in a file (--password-file), not in the URL',
  )
  const topic = values.topic ?? DEFAULT_SIMULATOR_TOPIC
  // MQTT 3.1.1 §4.7.1: wildcards are for subscriptions; a PUBLISH topic name has none.
  if (topic === '' || /[+#]/.test(topic) || topic.includes('\u0000'))
    throw new AgentUsageError('--topic must be a topic name without + or #')
  const chosen = format(values, 'json')
  if (chosen === 'csv')
    throw new AgentUsageError('--format csv is for --serial: the agent reads CSV from serial devices only')
  let password: string | undefined
  if (values['password-file'] !== undefined) {
    // MQTT 3.1.1 §3.1.2.9: a password needs a user name.
    if (values.username === undefined) throw new AgentUsageError('--password-file needs --username')
    const read = await readSecretFile(values['password-file'])
    if (!read.ok) throw new AgentUsageError(`--password-file ${read.message}`)
    password = read.value
  }
  return {
    format: chosen,
    create: async (notice) => {
      const { MqttDeviceLink } = await import('../simulator/mqtt-device-link.js')
      return new MqttDeviceLink({ url, topic, username: values.username, password, notice })
    },
  }
}

function serialLink(values: Values, path: string): LinkChoice {
  refuseOthers(values, MQTT_ONLY, '--mqtt')
  const baudRate =
    values['baud-rate'] === undefined ? 9600 : positiveInteger('--baud-rate', values['baud-rate'], 4_000_000)
  return {
    format: format(values, 'zk-attlog'),
    create: async () => {
      const { SerialDeviceLink } = await import('../simulator/serial-device-link.js')
      return new SerialDeviceLink({ path, baudRate })
    },
  }
}

function admsLink(values: Values, url: string): LinkChoice {
  refuseOthers(values, MQTT_ONLY, '--mqtt')
  refuseOthers(values, ['baud-rate'], '--serial')
  const serialNumber = values['serial-number']
  if (serialNumber === undefined)
    throw new AgentUsageError(
      '--adms needs --serial-number SN: the serial number the agent knows the device by',
    )
  if (!SERIAL_NUMBER.test(serialNumber))
    throw new AgentUsageError('--serial-number must be letters, digits, "-" or "_", up to 32')
  // ADMS has no credentials: a terminal is known by its serial number (the SN of every request).
  const parsed = linkUrl(
    '--adms',
    url,
    'http://127.0.0.1:8081',
    ['http:', 'https:'],
    '--adms takes no user or password: the agent knows a device by --serial-number',
  )
  if (parsed.pathname !== '/' || parsed.search || parsed.hash)
    throw new AgentUsageError(
      "--adms is the address of the agent's ADMS listener, http(s)://host:port, without a path: " +
        'the device adds /iclock/...',
    )
  // ADMS carries ATTLOG lines (Attendance PUSH, table=ATTLOG), nothing else.
  if (values.format !== undefined && values.format !== 'zk-attlog')
    throw new AgentUsageError('--adms uploads ATTLOG records: --format must be zk-attlog, or left out')
  return {
    format: 'zk-attlog',
    create: async (notice, timeZone) => {
      const { AdmsDeviceLink } = await import('../simulator/adms-device-link.js')
      return new AdmsDeviceLink({ url, serialNumber, notice, timeZone })
    },
  }
}

/**
 * PINs a ZK terminal of this record size can hold (ZK protocol record layouts): text of up to 24
 * characters in 40-byte records, a u32 in 16- and 8-byte ones (and in their 28-byte user entries).
 */
function zkEmployees(text: string | undefined, recordSize: 40 | 16 | 8): string[] {
  const codes = employees(text, recordSize === 40 ? DEFAULT_EMPLOYEES : DEFAULT_NUMERIC_EMPLOYEES)
  for (const code of codes) {
    if (recordSize === 40 && code.length > ZK_TEXT_PIN_LENGTH)
      throw new AgentUsageError(
        `--employees: "${code.slice(0, 70)}" is longer than the ${ZK_TEXT_PIN_LENGTH} characters of a ZK terminal's PIN`,
      )
    if (recordSize !== 40 && (!ZK_NUMERIC_PIN.test(code) || Number(code) > ZK_MAX_NUMERIC_PIN))
      throw new AgentUsageError(
        `--employees: a terminal with ${recordSize}-byte records keeps numeric PINs (1 to ${ZK_MAX_NUMERIC_PIN}, ` +
          `no leading zero), not "${code.slice(0, 70)}"; the device's pin rule in agent.yaml turns them into employee codes`,
      )
  }
  return codes
}

/** --zk-device PORT: the command is a ZK terminal listening on PORT, which the agent reads. */
function zkDevice(values: Values, portText: string): LinkChoice {
  refuseOthers(values, MQTT_ONLY, '--mqtt')
  refuseOthers(values, ['baud-rate'], '--serial')
  if (values.format !== undefined)
    throw new AgentUsageError(
      '--format is not for --zk-device: the terminal keeps records of its own (--record-size 40, 16 or 8)',
    )
  const port = wholeNumber(
    '--zk-device PORT',
    portText,
    65_535,
    ' (0: any free port, printed once it listens)',
  )
  const host = values.host ?? '127.0.0.1'
  if (!LISTEN_HOST.test(host))
    throw new AgentUsageError('--host must be an IP address or host name of this machine to listen on')
  const sizeText = values['record-size'] ?? '40'
  if (!['40', '16', '8'].includes(sizeText))
    throw new AgentUsageError(
      '--record-size must be 40, 16 or 8: the bytes of an attendance record (40 on TFT terminals, 16 and 8 on older ones)',
    )
  const recordSize = Number(sizeText) as 40 | 16 | 8
  // The range a terminal's menu takes (Comm. → Connection → COMM Key), as agent.yaml's commKey.
  const commKey =
    values['comm-key'] === undefined ? 0 : wholeNumber('--comm-key', values['comm-key'], 999_999)
  const records =
    values.records === undefined ? 0 : wholeNumber('--records', values.records, ZK_RECORD_CAPACITY)
  const serialNumber = values['serial-number']
  if (serialNumber !== undefined && !SERIAL_NUMBER.test(serialNumber))
    throw new AgentUsageError('--serial-number must be letters, digits, "-" or "_", up to 32')
  const codes = zkEmployees(values.employees, recordSize)
  let link: ZkDeviceLink | undefined
  return {
    // ZK records carry the time to the second, as ATTLOG does: the link takes ATTLOG lines.
    format: 'zk-attlog',
    employees: codes,
    create: async (notice, timeZone) => {
      const { ZkDeviceLink } = await import('../simulator/zk-device-link.js')
      link = new ZkDeviceLink({
        host,
        port,
        recordSize,
        commKey,
        serialNumber,
        timeZone,
        records,
        recordCapacity: ZK_RECORD_CAPACITY,
        employees: codes,
        notice,
      })
      return link
    },
    device: {
      records,
      capacity: ZK_RECORD_CAPACITY,
      exitAfterCount: values['exit-after-count'] === true,
      stop: async () => link?.stop(),
    },
  }
}

/** Resolves once `signal` is aborted. */
function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve()
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))
}

function describePace(p: Pace): string {
  if (p.kind === 'every') return `a punch every ${p.seconds} s or so`
  if (p.kind === 'rate') return `${p.perSecond} punch(es) a second`
  return 'one punch after another'
}

/**
 * `hajri-agent simulate`: acts as a biometric terminal, over MQTT (QoS 1, a punch counts
 * once PUBACKed: for the agent's embedded broker, once it is in the spool), a serial port (one
 * record per line), or ADMS (`--adms URL --serial-number SN`: a ZKTeco/eSSL terminal pushing ATTLOG
 * to the agent's iclock listener, a punch counts once its batch is answered `OK: n`), or as a ZK
 * terminal the agent reads over port 4370 (`--zk-device PORT`: a punch counts once it is in the
 * terminal's log; the terminal keeps serving after the last punch until Ctrl-C, or
 * --exit-after-count), for demos and load tests. Exit 0 when every punch sent was delivered, 1 when
 * the broker, port or ADMS listener cannot be reached (or the ZK port cannot be listened on), the
 * agent refuses the serial number, or a punch was not delivered, 2 on wrong usage.
 */
export const simulateCommand: AgentCommand = async (args, io) => {
  const values = parseValues(args)
  const transports = [values.mqtt, values.serial, values.adms, values['zk-device']].filter(
    (given) => given !== undefined,
  )
  if (transports.length !== 1)
    throw new AgentUsageError('give one of --mqtt URL or --serial PATH or --adms URL or --zk-device PORT')
  if (values['serial-number'] !== undefined && values.adms === undefined && values['zk-device'] === undefined)
    throw new AgentUsageError('--serial-number is for --adms or --zk-device')
  if (values['zk-device'] === undefined) refuseOthers(values, ZK_ONLY, '--zk-device')
  const choice =
    values.mqtt !== undefined
      ? await mqttLink(values, values.mqtt)
      : values.adms !== undefined
        ? admsLink(values, values.adms)
        : values['zk-device'] !== undefined
          ? zkDevice(values, values['zk-device'])
          : serialLink(values, values.serial as string)
  const codes = choice.employees ?? employees(values.employees)
  const chosenPace = pace(values)
  const count =
    values.count !== undefined
      ? positiveInteger('--count', values.count)
      : chosenPace.kind === 'burst'
        ? 1
        : undefined
  const device = choice.device
  if (device?.exitAfterCount && count === undefined)
    throw new AgentUsageError('--exit-after-count needs --count N: without it the punches go on until Ctrl-C')
  if (device && count !== undefined && device.records + count > device.capacity)
    throw new AgentUsageError(
      `--records ${device.records} and --count ${count} are more than the ${device.capacity} records the terminal's log holds`,
    )
  const timeZone = values['time-zone'] ?? 'Asia/Kolkata'
  if (!isValidTimeZone(timeZone))
    throw new AgentUsageError(`--time-zone "${timeZone}" is not an IANA time zone`)
  const resolutionMicros = FORMAT_RESOLUTION_MICROS[choice.format]
  const lead = punchLeadMicros({
    employees: codes.length,
    resolutionMicros,
    count,
    perSecond: chosenPace.kind === 'rate' ? chosenPace.perSecond : undefined,
  })
  if (chosenPace.kind !== 'every' && lead > MAX_LEAD_SECONDS * 1_000_000) {
    throw new AgentUsageError(
      `${codes.length} employee(s) cannot make that many punches: ${choice.format} writes times to the ` +
        `${resolutionMicros >= 1_000_000 ? 'second' : 'millisecond'}, and each punch of an employee needs a ` +
        'time of its own (two with the same time and direction are one punch to the agent). Give more employees, ' +
        `a lower --rate or --count${choice.format === 'json' || values.adms !== undefined || device ? '' : ', or --format json'}`,
    )
  }

  const notice = (message: string) => io.stderr(`hajri-agent simulate: ${message}\n`)
  const link = await choice.create(notice, timeZone)
  await link.open()
  if (count === undefined)
    notice(
      `${describePace(chosenPace)} ${device ? `at ${link.target}` : `to ${link.target} as ${choice.format}`}; Ctrl-C stops`,
    )

  const stop = new AbortController()
  const giveUp = new AbortController()
  const onSignal = () => (stop.signal.aborted ? giveUp.abort() : stop.abort())
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  const report = new SimulationReport({
    write: io.stdout,
    json: values.json === true,
    perPunch: chosenPace.kind !== 'rate' || chosenPace.perSecond <= MAX_RATE_WITH_LINES,
    deliveredAs: link.deliveredAs,
    timeZone,
  })
  let result: Awaited<ReturnType<typeof runSimulation>>
  try {
    result = await runSimulation({
      link,
      script: new PunchScript({ employees: codes, resolutionMicros }),
      toRecord: (punch) => deviceRecord(punch, choice.format, timeZone),
      pace: chosenPace,
      count,
      report,
      stop: stop.signal,
      giveUp: giveUp.signal,
      notice,
    })
    report.summary()
    if (result.failure) io.stderr(`hajri-agent: ${result.failure.message}\n`)
    // A terminal keeps its log for the agent to read when nobody punches: it goes on until stopped.
    if (device && !device.exitAfterCount && !stop.signal.aborted && !result.failure) {
      notice(`done punching; ${link.target} keeps serving its log until Ctrl-C`)
      await aborted(stop.signal)
    }
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    await device?.stop()
  }
  const missing = result.sent - result.acknowledged
  if (missing > 0) {
    io.stderr(`hajri-agent: ${missing} of ${result.sent} punch(es) sent were not ${link.deliveredAs}\n`)
    return 1
  }
  return 0
}
