import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { filtersOverlap as topicFiltersOverlap } from '../../../agent/config/topic-filter.js'
import { byPath, ConfigDir, type Doc, minimalDoc } from './config-fixture.js'

let files: ConfigDir
beforeAll(async () => {
  files = await ConfigDir.create()
})
afterAll(async () => {
  await files.remove()
})

/** The problems of the minimal file changed by `edit`, as {path: message}. */
async function problemsAfter(edit: (doc: Doc) => void, options: { now?: number } = {}) {
  const doc = minimalDoc()
  edit(doc)
  return byPath(await files.problems(doc, {}, options))
}

/** Loads the minimal file changed by `edit`: it must still be valid. */
async function loadsAfter(edit: (doc: Doc) => void) {
  const doc = minimalDoc()
  edit(doc)
  return files.load(doc)
}

const withEmbeddedBroker = (doc: Doc) => {
  doc.mqtt = { embedded: {} }
}

describe('cross-field rules', () => {
  it('cloud: exactly one of clientSecret and clientSecretFile', async () => {
    expect(await problemsAfter((d) => delete d.cloud.clientSecret)).toEqual({
      'cloud.clientSecret': 'is required (or clientSecretFile, a file holding it)',
    })
    await files.write('cs', 'x')
    expect(await problemsAfter((d) => (d.cloud.clientSecretFile = 'cs'))).toEqual({
      cloud: 'has both clientSecret and clientSecretFile: keep one',
    })
  })

  it('mqtt.embedded.users: exactly one of password and passwordFile, and unique usernames', async () => {
    await files.write('p', 'x')
    const problems = await problemsAfter((d) => {
      d.mqtt = {
        embedded: {
          users: [
            { username: 'a' },
            { username: 'b', password: 'x', passwordFile: 'p' },
            { username: 'a', password: 'y' },
          ],
        },
      }
    })
    expect(problems).toEqual({
      'mqtt.embedded.users[0].password': 'is required (or passwordFile, a file holding it)',
      'mqtt.embedded.users[1]': 'has both password and passwordFile: keep one',
      'mqtt.embedded.users[2].username': 'is also the username of mqtt.embedded.users[0]',
    })
  })

  it('mqtt.external: not both password and passwordFile; a password needs a username', async () => {
    await files.write('p', 'x')
    const external = { url: 'mqtt://broker:1883', clientId: 'agent-1' }
    expect(
      await problemsAfter(
        (d) => (d.mqtt = { external: { ...external, username: 'u', password: 'x', passwordFile: 'p' } }),
      ),
    ).toEqual({ 'mqtt.external': 'has both password and passwordFile: keep one' })
    expect(await problemsAfter((d) => (d.mqtt = { external: { ...external, password: 'x' } }))).toEqual({
      'mqtt.external.username': 'is required when a password is set (MQTT 3.1.1 §3.1.2.9)',
    })
    // Neither is fine: an anonymous site broker.
    expect((await loadsAfter((d) => (d.mqtt = { external }))).mqtt?.external).toEqual(external)
  })

  it('mqtt: one broker, embedded or external', async () => {
    expect(
      await problemsAfter((d) => (d.mqtt = { embedded: {}, external: { url: 'mqtt://b', clientId: 'c' } })),
    ).toEqual({ mqtt: 'has both embedded and external: the agent uses one broker, keep one' })
    expect(await problemsAfter((d) => (d.mqtt = {}))).toEqual({
      mqtt: "needs embedded (a broker inside the agent) or external (the site's broker)",
    })
  })

  it('a device needs mqtt, serial, adms or zk, and may have mqtt and serial both', async () => {
    expect(await problemsAfter((d) => (d.devices = [{ id: 'lonely' }]))).toEqual({
      'devices[0]': 'needs mqtt, serial, adms or zk: how the agent hears this device',
    })
    const both = await loadsAfter((d) => {
      withEmbeddedBroker(d)
      d.devices[0].mqtt = { topic: 'punches/main-door' }
    })
    expect(both.devices[0]?.mqtt?.topic).toBe('punches/main-door')
    expect(both.devices[0]?.serial?.path).toBe('/dev/ttyUSB0')
  })

  it('zk: a terminal read over port 4370 is a device of its own, at an address of its own, read at most every 10 s', async () => {
    const zk = (id: string, host: string, extra: Record<string, unknown> = {}) => ({
      id,
      zk: { host, ...extra },
    })
    expect(
      await problemsAfter((d) => {
        d.devices[0].zk = { host: '192.168.1.201' }
        d.devices.push(
          zk('gate-2', '192.168.1.202', { pollEvery: '5s' }),
          zk('gate-3', '192.168.1.202'),
          zk('gate-4', '192.168.1.203', { pollEvery: '2d' }),
        )
      }),
    ).toEqual({
      'devices[0].zk':
        'cannot be combined with mqtt, serial or adms: a terminal read over port 4370 is one device entry of its own',
      'devices[1].zk.pollEvery':
        'must be from 10s to 24h: the terminal is paused while its log is read, so not more often than that',
      'devices[2].zk.host':
        'is also the address of devices[1]: a terminal is one device, and allows one session at a time',
      'devices[3].zk.pollEvery': 'must be a duration in seconds, minutes or hours, e.g. 30s, 5m or 1h',
    })
    const loaded = await loadsAfter((d) => {
      d.devices.push(
        zk('gate-2', '192.168.1.202'),
        zk('gate-3', '192.168.1.202', { port: 4371, commKey: 1234 }),
      )
    })
    expect(loaded.devices[1]?.zk).toEqual({
      host: '192.168.1.202',
      port: 4370,
      transport: 'auto',
      commKey: 0,
      pollEvery: '5m',
      realtime: true,
      setTime: false,
      timeoutSeconds: 10,
    })
    expect(loaded.devices[2]?.zk?.commKey).toBe(1234)
  })

  it('adms: a push terminal needs the listener, is a device of its own, and has a serial number of its own', async () => {
    const terminal = (id: string, serialNumber: string) => ({ id, adms: { serialNumber } })
    expect(await problemsAfter((d) => d.devices.push(terminal('gate-2', 'CJDE193560303')))).toEqual({
      'devices[1].adms': 'needs the ADMS listener: set adms (at least adms: {}) at the top level',
    })
    expect(
      await problemsAfter((d) => {
        d.adms = {}
        d.devices.push(terminal('gate-2', 'CJDE193560303'), terminal('gate-3', 'CJDE193560303'))
        d.devices[0].adms = { serialNumber: 'AEH2192760012' }
      }),
    ).toEqual({
      'devices[0].adms':
        'cannot be combined with mqtt or serial: a push terminal is one device entry of its own',
      'devices[2].adms.serialNumber': 'is also the serial number of devices[1]: a terminal is one device',
    })
    const loaded = await loadsAfter((d) => {
      d.adms = { allowFrom: ['192.168.10.0/24', 'fd00::/8'] }
      d.devices.push({ ...terminal('gate-2', 'CJDE193560303'), pin: { prefix: 'E', width: 4 } })
    })
    expect(loaded.adms).toEqual({
      listen: '0.0.0.0:8081',
      allowFrom: ['192.168.10.0/24', 'fd00::/8'],
      pollSeconds: 10,
      errorDelaySeconds: 30,
      realtime: true,
      maxBodyBytes: 2 * 1024 * 1024,
      maxConnections: 256,
    })
    expect(loaded.devices[1]).toEqual({
      id: 'gate-2',
      adms: { serialNumber: 'CJDE193560303' },
      pin: { prefix: 'E', width: 4 },
    })
  })

  it('adms: addresses and subnets that parse, a listen address, a body limit a batch fits in', async () => {
    expect(
      await problemsAfter((d) => {
        d.adms = {
          listen: '0.0.0.0:99999',
          allowFrom: ['192.168.10.0/24', 'gate.local', '10.0.0.0/33'],
          maxBodyBytes: '4KiB',
        }
        d.devices.push({ id: 'gate-2', adms: { serialNumber: 'CJDE193560303', allowFrom: ['300.1.1.1'] } })
      }),
    ).toEqual({
      'adms.listen': 'must be host:port with a port from 1 to 65535, e.g. 0.0.0.0:8081',
      'adms.allowFrom[1]':
        'is not an IP address or a subnet in CIDR form, e.g. 192.168.10.25 or 192.168.10.0/24',
      'adms.allowFrom[2]':
        'is not an IP address or a subnet in CIDR form, e.g. 192.168.10.25 or 192.168.10.0/24',
      'adms.maxBodyBytes': "must be at least 64KiB: a terminal's upload must fit",
      'devices[1].adms.allowFrom[0]':
        'is not an IP address or a subnet in CIDR form, e.g. 192.168.10.25 or 192.168.10.0/24',
    })
  })

  it('adms and pin: serial numbers and prefixes are refused with a message that says what they may hold', async () => {
    expect(
      await problemsAfter((d) => {
        d.adms = {}
        d.site.pin = { prefix: 'E 1', width: 0 }
        d.devices.push({ id: 'gate-2', adms: { serialNumber: 'CJDE 1935' } })
      }),
    ).toEqual({
      'site.pin.prefix': 'must hold only letters, digits, ".", "_" and "-", e.g. E',
      'site.pin.width': 'must be >= 1',
      'devices[1].adms.serialNumber':
        'must be a serial number as the terminal shows it: letters and digits (and "_" or "-"), e.g. CJDE193560303',
    })
  })

  it('a device with mqtt needs a broker', async () => {
    expect(
      await problemsAfter((d) => (d.devices = [{ id: 'gate-1', mqtt: { topic: 'punches/gate-1' } }])),
    ).toEqual({
      'devices[0].mqtt': 'needs a broker: set mqtt.embedded or mqtt.external at the top level',
    })
  })

  it('device ids and serial ports are unique', async () => {
    const problems = await problemsAfter((d) => {
      d.devices = [
        { id: 'door', serial: { path: '/dev/ttyUSB0' } },
        { id: 'door', serial: { path: '/dev/ttyUSB1' } },
        { id: 'gate', serial: { path: '/dev/ttyUSB0' } },
      ]
    })
    expect(problems).toEqual({
      'devices[1].id': 'is also the id of devices[0]: device ids must be unique',
      'devices[2].serial.path': 'is also the port of devices[0]: a port has one reader',
    })
  })

  it('MQTT topics are valid filters that no topic matches twice', async () => {
    const problems = await problemsAfter((d) => {
      withEmbeddedBroker(d)
      d.devices = [
        { id: 'a', mqtt: { topic: 'punches/#' } },
        { id: 'b', mqtt: { topic: 'punches/gate-1' } },
        { id: 'c', mqtt: { topic: 'gates/#/x' } },
        { id: 'd', mqtt: { topic: 'gates/door+' } },
        { id: 'e', mqtt: { topic: 'gates/+/in' } },
      ]
    })
    expect(problems).toEqual({
      'devices[1].mqtt.topic':
        'overlaps the topic of devices[0]: a punch on a topic both match could not be told apart',
      'devices[2].mqtt.topic':
        'is not a topic filter: # must be a whole level and the last one (MQTT 3.1.1 §4.7.1.2)',
      'devices[3].mqtt.topic':
        'is not a topic filter: + must be a whole level, e.g. punches/+ (MQTT 3.1.1 §4.7.1.3)',
    })
  })

  it('decides topic overlap as MQTT matching does', () => {
    expect(topicFiltersOverlap('a/b', 'a/b')).toBe(true)
    expect(topicFiltersOverlap('a/+', 'a/b')).toBe(true)
    expect(topicFiltersOverlap('a/#', 'a')).toBe(true) // §4.7.1.2: # includes the parent level
    expect(topicFiltersOverlap('a/+', 'a/b/c')).toBe(false)
    expect(topicFiltersOverlap('a/b', 'a/c')).toBe(false)
    expect(topicFiltersOverlap('+/x', 'b/+')).toBe(true)
    expect(topicFiltersOverlap('#', '$SYS/x')).toBe(false) // §4.7.2
  })

  it('format csv needs serial.csv, and serial.csv needs format csv', async () => {
    expect(await problemsAfter((d) => (d.devices[0].serial.format = 'csv'))).toEqual({
      'devices[0].serial.csv': 'is required when format is csv: it says which column holds what',
    })
    expect(
      await problemsAfter((d) => (d.devices[0].serial.csv = { columns: { employeeCode: 0, status: 1 } })),
    ).toEqual({ 'devices[0].serial.csv': 'is only read when format is csv: set format: csv, or remove csv' })
  })

  it('csv columns are distinct, and give the direction unless the device has a fixed punchType', async () => {
    const csv = (columns: Doc) => (d: Doc) => {
      d.devices[0].serial = { path: '/dev/ttyS0', format: 'csv', csv: { columns } }
    }
    expect(await problemsAfter(csv({ employeeCode: 0, punchedAt: 0, status: 1 }))).toEqual({
      'devices[0].serial.csv.columns.punchedAt': 'is the same column as employeeCode',
    })
    expect(await problemsAfter(csv({ employeeCode: 0, punchedAt: 1 }))).toEqual({
      'devices[0].serial.csv.columns':
        'needs a status or a punchType column, unless the device has a fixed punchType',
    })
    const fixed = await loadsAfter((d) => {
      csv({ employeeCode: 0, punchedAt: 1 })(d)
      d.devices[0].punchType = 'IN'
    })
    expect(fixed.devices[0]?.punchType).toBe('IN')
  })

  it('statusMap and punchType are not both set', async () => {
    expect(
      await problemsAfter((d) => {
        d.devices[0].statusMap = { 0: 'IN', 1: 'OUT' }
        d.devices[0].punchType = 'IN'
      }),
    ).toEqual({
      'devices[0].punchType':
        'cannot be set with statusMap: punchType fixes the direction of every punch, statusMap reads it from the status; keep one',
    })
  })

  it('time zones are IANA names, for the site and each device', async () => {
    const problems = await problemsAfter((d) => {
      d.site.timezone = 'IST+5:30'
      d.devices[0].timezone = 'Asia/Kolkatta'
    })
    expect(problems).toEqual({
      'site.timezone': 'is not an IANA time zone name, e.g. Asia/Kolkata, Asia/Dubai or UTC',
      'devices[0].timezone': 'is not an IANA time zone name, e.g. Asia/Kolkata, Asia/Dubai or UTC',
    })
    const ok = await loadsAfter((d) => {
      d.site.timezone = 'Asia/Dubai'
      d.devices[0].timezone = 'UTC'
    })
    expect([ok.site.timezone, ok.devices[0]?.timezone]).toEqual(['Asia/Dubai', 'UTC'])
  })

  it('site.clockFloor is an RFC 3339 time with an offset, in the past', async () => {
    const message =
      'must be an RFC 3339 time with an offset, e.g. 2020-01-01T00:00:00Z or 2020-01-01T00:00:00+05:30'
    for (const floor of ['2024-01-01', '2024-01-01 00:00:00', '2024-13-01T00:00:00Z', 'yesterday']) {
      expect(await problemsAfter((d) => (d.site.clockFloor = floor)), floor).toEqual({
        'site.clockFloor': message,
      })
    }
    const now = Date.parse('2026-11-21T00:00:00Z')
    expect(await problemsAfter((d) => (d.site.clockFloor = '2027-01-01T00:00:00+05:30'), { now })).toEqual({
      'site.clockFloor': 'is in the future: every punch would be parked as device_clock_invalid',
    })
    const ok = await loadsAfter((d) => (d.site.clockFloor = '2024-06-01T00:00:00+05:30'))
    expect(ok.site.clockFloor).toBe('2024-06-01T00:00:00+05:30')
  })

  it('status.listen is host:port with a real port', async () => {
    const bad = 'must be host:port with a port from 1 to 65535, e.g. 127.0.0.1:9410'
    expect(await problemsAfter((d) => (d.status = { listen: '127.0.0.1:99999' }))).toEqual({
      'status.listen': bad,
    })
    expect(await problemsAfter((d) => (d.status = { listen: '127.0.0.1:0' }))).toEqual({
      'status.listen': bad,
    })
    expect(await problemsAfter((d) => (d.status = { listen: '9410' }))).toEqual({
      'status.listen': 'must be host:port, e.g. 127.0.0.1:9410 or [::1]:9410',
    })
    for (const listen of ['[::1]:9410', 'localhost:9410', '0.0.0.0:1']) {
      expect((await loadsAfter((d) => (d.status = { listen }))).status.listen).toBe(listen)
    }
  })

  it('spool.maxBytes becomes bytes, and is at least 1MiB', async () => {
    const sizes: [string | number, number][] = [
      ['2GiB', 2 * 1024 ** 3],
      ['500MB', 500 * 1000 ** 2],
      ['1.5 GiB', 1.5 * 1024 ** 3],
      ['1MiB', 1024 ** 2],
      [5_000_000, 5_000_000],
      ['5000000', 5_000_000],
    ]
    for (const [maxBytes, bytes] of sizes) {
      expect((await loadsAfter((d) => (d.spool = { maxBytes }))).spool.maxBytes, String(maxBytes)).toBe(bytes)
    }
    expect(await problemsAfter((d) => (d.spool = { maxBytes: 2 }))).toEqual({
      'spool.maxBytes': 'must be at least 1MiB: a bare number counts bytes (write 2GiB, not 2)',
    })
    expect(await problemsAfter((d) => (d.spool = { maxBytes: '2 gigs' }))).toEqual({
      'spool.maxBytes':
        'must be a size such as 2GiB, 512MiB or 500MB (units B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), or a number of bytes',
    })
    expect(await problemsAfter((d) => (d.spool = { maxBytes: '1.0000001MB' }))).toEqual({
      'spool.maxBytes': 'is not a whole number of bytes',
    })
  })

  it('URLs parse, and carry no credentials', async () => {
    const problems = await problemsAfter((d) => {
      d.cloud.url = 'https://agent:hunter2@hajri.example.com'
      d.mqtt = { external: { url: 'mqtt://[broker', clientId: 'agent-1' } }
    })
    expect(problems).toEqual({
      'cloud.url': 'must not hold a user name or password: use the credential settings instead',
      'mqtt.external.url': 'is not a valid URL',
    })
  })
})
