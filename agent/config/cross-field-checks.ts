// One rule for topic filters: the same the broker applies when it starts (topic-filter.ts).

import { parseDuration } from '../../shared/duration.js'
import { isLoopbackHost } from '../../shared/loopback-host.js'
import { isValidTimeZone, parseTimestamp } from '../../shared/time.js'
import { parseAddressRange } from './address-range.js'
import { parseByteSize } from './byte-size.js'
import type { PathSegment } from './config-file-error.js'
import { parseListenAddress } from './listen-address.js'
import type { ProblemList } from './problem-list.js'
import { filtersOverlap, topicFilterProblem } from './topic-filter.js'

/**
 * The rules a JSON Schema cannot say (or cannot say clearly): one of two fields, unique ids, values
 * that must parse. They run on the document even when it has schema errors, so one run of
 * check-config reports everything; each therefore looks at the shape it needs before using it.
 */

type Mapping = Record<string, unknown>

const mapping = (value: unknown): Mapping | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Mapping) : undefined
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)
const has = (m: Mapping, key: string) => m[key] !== undefined

/** The smallest spool cap accepted: `maxBytes: 2` is two bytes, which is never what was meant. */
const MIN_SPOOL_BYTES = 1024 * 1024

export function checkCrossFields(document: unknown, problems: ProblemList, now = Date.now()): void {
  const root = mapping(document)
  if (!root) return
  checkSite(mapping(root.site), problems, now)
  checkCloud(mapping(root.cloud), problems)
  checkSpool(mapping(root.spool), problems)
  const listen = text(mapping(root.status)?.listen)
  if (listen !== undefined && !parseListenAddress(listen)) {
    problems.add(['status', 'listen'], 'must be host:port with a port from 1 to 65535, e.g. 127.0.0.1:9410')
  }
  const mqtt = mapping(root.mqtt)
  if (mqtt) checkMqtt(mqtt, problems)
  const adms = mapping(root.adms)
  if (adms) checkAdms(adms, problems)
  if (Array.isArray(root.devices)) {
    checkDevices(
      root.devices,
      {
        broker: mqtt !== undefined && (has(mqtt, 'embedded') || has(mqtt, 'external')),
        adms: adms !== undefined,
      },
      problems,
    )
  }
}

/** The smallest ADMS body limit: a terminal's batch of a few hundred records must fit. */
const MIN_ADMS_BODY_BYTES = 64 * 1024

function checkAddressList(value: unknown, at: PathSegment[], problems: ProblemList): void {
  if (!Array.isArray(value)) return
  value.forEach((entry, i) => {
    if (typeof entry === 'string' && !parseAddressRange(entry)) {
      problems.add(
        [...at, i],
        'is not an IP address or a subnet in CIDR form, e.g. 192.168.10.25 or 192.168.10.0/24',
      )
    }
  })
}

function checkAdms(adms: Mapping, problems: ProblemList): void {
  const listen = text(adms.listen)
  if (listen !== undefined && !parseListenAddress(listen)) {
    problems.add(['adms', 'listen'], 'must be host:port with a port from 1 to 65535, e.g. 0.0.0.0:8081')
  }
  checkAddressList(adms.allowFrom, ['adms', 'allowFrom'], problems)
  const size = adms.maxBodyBytes
  if (typeof size === 'number' || typeof size === 'string') {
    const parsed = parseByteSize(size)
    if (!parsed.ok) problems.add(['adms', 'maxBodyBytes'], parsed.message)
    else if (parsed.bytes < MIN_ADMS_BODY_BYTES) {
      problems.add(['adms', 'maxBodyBytes'], "must be at least 64KiB: a terminal's upload must fit")
    }
  }
}

function checkTimeZone(value: unknown, at: PathSegment[], problems: ProblemList): void {
  const zone = text(value)
  if (zone !== undefined && zone !== '' && !isValidTimeZone(zone)) {
    problems.add(at, 'is not an IANA time zone name, e.g. Asia/Kolkata, Asia/Dubai or UTC')
  }
}

function checkSite(site: Mapping | undefined, problems: ProblemList, now: number): void {
  if (!site) return
  checkTimeZone(site.timezone, ['site', 'timezone'], problems)
  const floor = text(site.clockFloor)
  const floorMicros = floor === undefined ? undefined : parseTimestamp(floor)
  if (floorMicros !== undefined && floorMicros > now * 1000) {
    problems.add(
      ['site', 'clockFloor'],
      'is in the future: every punch would be parked as device_clock_invalid',
    )
  }
}

/** Exactly one of a secret and its file. */
function checkSecretPair(
  owner: Mapping,
  at: PathSegment[],
  field: string,
  required: boolean,
  problems: ProblemList,
): void {
  const inline = has(owner, field)
  const file = has(owner, `${field}File`)
  if (inline && file) problems.add(at, `has both ${field} and ${field}File: keep one`)
  else if (required && !inline && !file) {
    problems.add([...at, field], `is required (or ${field}File, a file holding it)`)
  }
}

function checkUrl(value: unknown, at: PathSegment[], problems: ProblemList): URL | undefined {
  const url = text(value)
  if (url === undefined) return undefined
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    problems.add(at, 'is not a valid URL')
    return undefined
  }
  // Credentials have their own fields, which are read from secrets and never logged; a URL is logged.
  if (parsed.username !== '' || parsed.password !== '') {
    problems.add(at, 'must not hold a user name or password: use the credential settings instead')
  }
  return parsed
}

function checkCloud(cloud: Mapping | undefined, problems: ProblemList): void {
  if (!cloud) return
  checkSecretPair(cloud, ['cloud'], 'clientSecret', true, problems)
  const url = checkUrl(cloud.url, ['cloud', 'url'], problems)
  // Over http:// the client secret (OAuth client_secret_basic,
  // RFC 6749 §2.3.1), the access token and every punch cross the network in clear text. Only a
  // loopback host (a TLS proxy on this machine, a demo) is safe without saying so.
  if (url?.protocol === 'http:' && !isLoopbackHost(url.hostname) && cloud.allowInsecure !== true) {
    problems.add(
      ['cloud', 'url'],
      'uses http:// to another machine, so the client secret and punches would cross the network in clear text: use https://, or set cloud.allowInsecure: true for a network you trust',
    )
  }
}

function checkSpool(spool: Mapping | undefined, problems: ProblemList): void {
  const size = spool?.maxBytes
  if (typeof size !== 'number' && typeof size !== 'string') return
  const parsed = parseByteSize(size)
  if (!parsed.ok) problems.add(['spool', 'maxBytes'], parsed.message)
  else if (parsed.bytes < MIN_SPOOL_BYTES) {
    problems.add(
      ['spool', 'maxBytes'],
      'must be at least 1MiB: a bare number counts bytes (write 2GiB, not 2)',
    )
  }
}

function checkMqtt(mqtt: Mapping, problems: ProblemList): void {
  const embedded = mapping(mqtt.embedded)
  const external = mapping(mqtt.external)
  if (has(mqtt, 'embedded') && has(mqtt, 'external')) {
    problems.add(['mqtt'], 'has both embedded and external: the agent uses one broker, keep one')
  } else if (!has(mqtt, 'embedded') && !has(mqtt, 'external')) {
    problems.add(['mqtt'], "needs embedded (a broker inside the agent) or external (the site's broker)")
  }
  if (embedded && Array.isArray(embedded.users)) {
    const seen = new Map<string, number>()
    embedded.users.forEach((entry, i) => {
      const user = mapping(entry)
      if (!user) return
      const at = ['mqtt', 'embedded', 'users', i]
      checkSecretPair(user, at, 'password', true, problems)
      const name = text(user.username)
      if (name === undefined) return
      const first = seen.get(name)
      if (first === undefined) seen.set(name, i)
      else problems.add([...at, 'username'], `is also the username of mqtt.embedded.users[${first}]`)
    })
  }
  if (external) {
    checkSecretPair(external, ['mqtt', 'external'], 'password', false, problems)
    // MQTT 3.1.1 §3.1.2.9: without a user name there is no password flag.
    if ((has(external, 'password') || has(external, 'passwordFile')) && !has(external, 'username')) {
      problems.add(
        ['mqtt', 'external', 'username'],
        'is required when a password is set (MQTT 3.1.1 §3.1.2.9)',
      )
    }
    checkUrl(external.url, ['mqtt', 'external', 'url'], problems)
  }
}

function checkDevices(
  devices: readonly unknown[],
  listeners: { broker: boolean; adms: boolean },
  problems: ProblemList,
): void {
  const ids = new Map<string, number>()
  const ports = new Map<string, number>()
  const serialNumbers = new Map<string, number>()
  const zkAddresses = new Map<string, number>()
  const topics: { topic: string; index: number }[] = []
  devices.forEach((entry, i) => {
    const device = mapping(entry)
    if (!device) return
    const at: PathSegment[] = ['devices', i]
    const id = text(device.id)
    if (id !== undefined) {
      const first = ids.get(id)
      if (first === undefined) ids.set(id, i)
      else problems.add([...at, 'id'], `is also the id of devices[${first}]: device ids must be unique`)
    }
    checkTimeZone(device.timezone, [...at, 'timezone'], problems)
    if (!has(device, 'mqtt') && !has(device, 'serial') && !has(device, 'adms') && !has(device, 'zk')) {
      problems.add(at, 'needs mqtt, serial, adms or zk: how the agent hears this device')
    }
    if (has(device, 'zk')) checkZk(mapping(device.zk), device, at, zkAddresses, i, problems)
    const adms = mapping(device.adms)
    if (has(device, 'adms')) {
      if (has(device, 'mqtt') || has(device, 'serial')) {
        problems.add(
          [...at, 'adms'],
          'cannot be combined with mqtt or serial: a push terminal is one device entry of its own',
        )
      } else if (!listeners.adms) {
        problems.add(
          [...at, 'adms'],
          'needs the ADMS listener: set adms (at least adms: {}) at the top level',
        )
      }
    }
    const serialNumber = text(adms?.serialNumber)
    if (serialNumber !== undefined) {
      const first = serialNumbers.get(serialNumber)
      if (first === undefined) serialNumbers.set(serialNumber, i)
      else {
        problems.add(
          [...at, 'adms', 'serialNumber'],
          `is also the serial number of devices[${first}]: a terminal is one device`,
        )
      }
    }
    checkAddressList(adms?.allowFrom, [...at, 'adms', 'allowFrom'], problems)
    if (has(device, 'statusMap') && has(device, 'punchType')) {
      problems.add(
        [...at, 'punchType'],
        'cannot be set with statusMap: punchType fixes the direction of every punch, statusMap reads it from the status; keep one',
      )
    }
    const mqtt = mapping(device.mqtt)
    if (has(device, 'mqtt') && !listeners.broker) {
      problems.add([...at, 'mqtt'], 'needs a broker: set mqtt.embedded or mqtt.external at the top level')
    }
    const topic = text(mqtt?.topic)
    if (topic !== undefined && topic !== '') {
      const wrong = topicFilterProblem(topic)
      const clash = topics.find((other) => filtersOverlap(other.topic, topic))
      if (wrong) problems.add([...at, 'mqtt', 'topic'], wrong)
      else if (clash) {
        problems.add(
          [...at, 'mqtt', 'topic'],
          `overlaps the topic of devices[${clash.index}]: a punch on a topic both match could not be told apart`,
        )
      } else topics.push({ topic, index: i })
    }
    const serial = mapping(device.serial)
    if (serial) checkSerial(serial, at, device, ports, i, problems)
  })
}

function checkSerial(
  serial: Mapping,
  at: PathSegment[],
  device: Mapping,
  ports: Map<string, number>,
  index: number,
  problems: ProblemList,
): void {
  const path = text(serial.path)
  if (path !== undefined) {
    const first = ports.get(path)
    if (first === undefined) ports.set(path, index)
    else
      problems.add([...at, 'serial', 'path'], `is also the port of devices[${first}]: a port has one reader`)
  }
  const format = text(serial.format)
  if (format === 'csv' && !has(serial, 'csv')) {
    problems.add([...at, 'serial', 'csv'], 'is required when format is csv: it says which column holds what')
  } else if (format !== undefined && format !== 'csv' && has(serial, 'csv')) {
    problems.add([...at, 'serial', 'csv'], 'is only read when format is csv: set format: csv, or remove csv')
  }
  const columns = mapping(mapping(serial.csv)?.columns)
  if (format !== 'csv' || !columns) return
  const byColumn = new Map<number, string>()
  for (const [field, column] of Object.entries(columns)) {
    if (typeof column !== 'number') continue
    const other = byColumn.get(column)
    if (other === undefined) byColumn.set(column, field)
    else problems.add([...at, 'serial', 'csv', 'columns', field], `is the same column as ${other}`)
  }
  if (!has(columns, 'status') && !has(columns, 'punchType') && !has(device, 'punchType')) {
    problems.add(
      [...at, 'serial', 'csv', 'columns'],
      'needs a status or a punchType column, unless the device has a fixed punchType',
    )
  }
}

/** The shortest and longest poll: a terminal is disabled while its log is read. */
const MIN_ZK_POLL_SECONDS = 10
const MAX_ZK_POLL_SECONDS = 24 * 3600

function checkZk(
  zk: Mapping | undefined,
  device: Mapping,
  at: PathSegment[],
  addresses: Map<string, number>,
  index: number,
  problems: ProblemList,
): void {
  if (has(device, 'mqtt') || has(device, 'serial') || has(device, 'adms')) {
    problems.add(
      [...at, 'zk'],
      'cannot be combined with mqtt, serial or adms: a terminal read over port 4370 is one device entry of its own',
    )
  }
  if (!zk) return
  const pollEvery = text(zk.pollEvery)
  const seconds = pollEvery === undefined ? undefined : parseDuration(pollEvery)
  if (seconds !== undefined && (seconds < MIN_ZK_POLL_SECONDS || seconds > MAX_ZK_POLL_SECONDS)) {
    problems.add(
      [...at, 'zk', 'pollEvery'],
      'must be from 10s to 24h: the terminal is paused while its log is read, so not more often than that',
    )
  }
  const host = text(zk.host)
  if (host === undefined) return
  // One session at a time is all a terminal allows: two devices on one address would lock each other out.
  const address = `${host.toLowerCase()}:${typeof zk.port === 'number' ? zk.port : 4370}`
  const first = addresses.get(address)
  if (first === undefined) addresses.set(address, index)
  else {
    problems.add(
      [...at, 'zk', 'host'],
      `is also the address of devices[${first}]: a terminal is one device, and allows one session at a time`,
    )
  }
}
