import { chmod, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadAgentConfig } from '../../../agent/config/load.js'
import { AgentConfigSchema } from '../../../agent/config/schema.js'
import { byPath, CLIENT_SECRET, ConfigDir, minimalDoc } from './config-fixture.js'

let files: ConfigDir
beforeAll(async () => {
  files = await ConfigDir.create()
})
afterAll(async () => {
  await files.remove()
})

describe('loadAgentConfig: defaults', () => {
  it('fills every default from the schema into a minimal file', async () => {
    const config = await files.load(minimalDoc())
    expect(config.site).toEqual({
      id: 'pune-plant-1',
      timezone: 'Asia/Kolkata',
      clockFloor: '2020-01-01T00:00:00Z',
    })
    expect(config.cloud).toEqual({
      url: 'https://hajri.example.com',
      allowInsecure: false,
      clientId: 'hjc_test',
      clientSecret: CLIENT_SECRET,
      scope: 'attendance:write',
      timeoutSeconds: 15,
      concurrency: 2,
      batchSize: 500,
    })
    // spool.dir's default is relative: it is taken from the configuration file's directory.
    expect(config.spool).toEqual({
      dir: join(files.dir, 'spool'),
      maxBytes: 2 * 1024 ** 3,
      chunkPunches: 500,
    })
    expect(config.status).toEqual({ listen: '127.0.0.1:9410' })
    expect(config.log).toEqual({ level: 'info' })
    expect(config.mqtt).toBeUndefined()
    expect(config.devices).toEqual([
      {
        id: 'main-door',
        serial: {
          path: '/dev/ttyUSB0',
          baudRate: 9600,
          dataBits: 8,
          parity: 'none',
          stopBits: 1,
          framing: { type: 'line', delimiter: '\n' },
          format: 'zk-attlog',
        },
      },
    ])
  })

  it('takes its defaults from the schema, not from code', async () => {
    const config = await files.load(minimalDoc())
    const cloud = AgentConfigSchema.properties.cloud.properties
    expect(config.cloud.batchSize).toBe(cloud.batchSize.default)
    expect(config.cloud.timeoutSeconds).toBe(cloud.timeoutSeconds.default)
    expect(config.site.timezone).toBe(AgentConfigSchema.properties.site.properties.timezone.default)
  })

  it('never overrides a value that is written, and never merges a default into one', async () => {
    const doc = minimalDoc()
    doc.spool = { chunkPunches: 10, maxBytes: '500MB' }
    doc.devices = [
      { id: 'a', serial: { path: '/dev/ttyS0', baudRate: 115200, framing: { type: 'stx-etx' } } },
      { id: 'b', serial: { path: '/dev/ttyS1', framing: { type: 'line' } } },
      { id: 'c', serial: { path: '/dev/ttyS2', framing: { type: 'line', delimiter: ';' } } },
    ]
    const config = await files.load(doc)
    expect(config.spool.chunkPunches).toBe(10)
    expect(config.spool.maxBytes).toBe(500_000_000)
    expect(config.devices.map((d) => d.serial?.framing)).toEqual([
      // The default framing has a delimiter; a stx-etx framing must not gain one.
      { type: 'stx-etx' },
      // Inside a union's branch the branch's own default applies.
      { type: 'line', delimiter: '\n' },
      { type: 'line', delimiter: ';' },
    ])
    expect(config.devices[0]?.serial?.baudRate).toBe(115200)
  })

  it('fills the MQTT defaults: embedded broker address and port, no users, json payloads', async () => {
    const doc = minimalDoc()
    doc.mqtt = { embedded: {} }
    doc.devices = [{ id: 'gate-1', mqtt: { topic: 'punches/gate-1' } }]
    const config = await files.load(doc)
    expect(config.mqtt).toEqual({ embedded: { host: '0.0.0.0', port: 1883, users: [] } })
    expect(config.devices[0]?.mqtt).toEqual({ topic: 'punches/gate-1', format: 'json' })
  })

  it('fills the csv delimiter', async () => {
    const doc = minimalDoc()
    doc.devices[0].serial = {
      path: '/dev/ttyS0',
      format: 'csv',
      csv: { columns: { employeeCode: 0, status: 1 } },
    }
    const config = await files.load(doc)
    expect(config.devices[0]?.serial?.csv).toEqual({
      delimiter: ',',
      columns: { employeeCode: 0, status: 1 },
    })
  })
})

describe('loadAgentConfig: paths and files', () => {
  it('resolves a relative spool.dir against the configuration file, and keeps an absolute one', async () => {
    const relative = minimalDoc()
    relative.spool = { dir: 'data/spool' }
    expect((await files.load(relative)).spool.dir).toBe(join(files.dir, 'data/spool'))
    const absolute = minimalDoc()
    absolute.spool = { dir: '/var/lib/hajri-agent/spool' }
    expect((await files.load(absolute)).spool.dir).toBe('/var/lib/hajri-agent/spool')
  })

  it('reads clientSecretFile relative to the configuration file, without its line end or BOM', async () => {
    await files.write('secrets/client', '\uFEFFfrom-a-file\r\n')
    const doc = minimalDoc()
    doc.cloud = { url: 'https://hajri.example.com', clientId: 'hjc_test', clientSecretFile: 'secrets/client' }
    const config = await files.load(doc)
    expect(config.cloud.clientSecret).toBe('from-a-file')
    expect(config.cloud).not.toHaveProperty('clientSecretFile')
  })

  it('keeps spaces that are part of a secret', async () => {
    const path = await files.write('spaced', ' pass word \n')
    const doc = minimalDoc()
    doc.cloud = { url: 'https://hajri.example.com', clientId: 'hjc_test', clientSecretFile: path }
    expect((await files.load(doc)).cloud.clientSecret).toBe(' pass word ')
  })

  it('reads MQTT user and external broker passwords from their files', async () => {
    await files.write('gate-1.pass', 'gate-one\n')
    await files.write('broker.pass', 'broker-pw\n')
    const embedded = minimalDoc()
    embedded.mqtt = {
      embedded: {
        users: [
          { username: 'gate-1', passwordFile: 'gate-1.pass' },
          { username: 'gate-2', password: 'inline-pw' },
        ],
      },
    }
    expect((await files.load(embedded)).mqtt?.embedded?.users).toEqual([
      { username: 'gate-1', password: 'gate-one' },
      { username: 'gate-2', password: 'inline-pw' },
    ])
    const external = minimalDoc()
    external.mqtt = {
      external: {
        url: 'mqtt://broker:1883',
        clientId: 'agent-1',
        username: 'hajri',
        passwordFile: 'broker.pass',
      },
    }
    expect((await files.load(external)).mqtt?.external).toEqual({
      url: 'mqtt://broker:1883',
      clientId: 'agent-1',
      username: 'hajri',
      password: 'broker-pw',
    })
  })

  it('checks TLS files exist and gives their absolute paths', async () => {
    await files.write('tls/broker.crt', 'cert')
    await files.write('tls/broker.key', 'key')
    const doc = minimalDoc()
    doc.mqtt = { embedded: { tls: { certFile: 'tls/broker.crt', keyFile: 'tls/broker.key' } } }
    expect((await files.load(doc)).mqtt?.embedded?.tls).toEqual({
      certFile: join(files.dir, 'tls/broker.crt'),
      keyFile: join(files.dir, 'tls/broker.key'),
    })
    doc.mqtt.embedded.tls.caFile = 'tls/missing-ca.crt'
    expect(byPath(await files.problems(doc))).toEqual({
      'mqtt.embedded.tls.caFile': `names a file that does not exist (a relative path is read from ${files.dir})`,
    })
  })

  it('reports a secret file that is missing, empty, a directory or unreadable, at its path', async () => {
    await files.write('empty.pass', '\n')
    await mkdir(join(files.dir, 'a-directory'), { recursive: true })
    const unreadable = await files.write('unreadable.pass', 'x')
    await chmod(unreadable, 0o000)
    const doc = minimalDoc()
    doc.cloud = { url: 'https://hajri.example.com', clientId: 'hjc_test', clientSecretFile: 'missing.pass' }
    doc.mqtt = {
      embedded: {
        users: [
          { username: 'a', passwordFile: 'empty.pass' },
          { username: 'b', passwordFile: 'a-directory' },
          { username: 'c', passwordFile: 'unreadable.pass' },
        ],
      },
    }
    const problems = byPath(await files.problems(doc))
    expect(problems['cloud.clientSecretFile']).toBe(
      `names a file that does not exist (a relative path is read from ${files.dir})`,
    )
    expect(problems['mqtt.embedded.users[0].passwordFile']).toBe('names an empty file')
    expect(problems['mqtt.embedded.users[1].passwordFile']).toBe('names a directory or device, not a file')
    // root reads anything: the permission check only means something for other users.
    if (process.getuid?.() !== 0) {
      expect(problems['mqtt.embedded.users[2].passwordFile']).toBe(
        'names a file this user cannot read (permission denied)',
      )
    }
  })

  it('reports a configuration file that does not exist, or is a directory', async () => {
    const missing = join(files.dir, 'nope.yaml')
    await expect(loadAgentConfig(missing, {})).rejects.toMatchObject({
      problems: [{ path: missing, message: 'does not exist' }],
    })
    await expect(loadAgentConfig(files.dir, {})).rejects.toMatchObject({
      problems: [{ path: files.dir, message: 'is a directory, not a configuration file' }],
    })
  })
})
