import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigFileError } from '../../../agent/config/config-file-error.js'
import { byPath, CLIENT_SECRET, ConfigDir, minimalDoc } from './config-fixture.js'

let files: ConfigDir
beforeAll(async () => {
  files = await ConfigDir.create()
})
afterAll(async () => {
  await files.remove()
})

describe('loadAgentConfig: every problem at once', () => {
  it('reports each wrong field once, all of them, each at its path', async () => {
    const doc = minimalDoc()
    doc.site.id = '-pune'
    doc.cloud.url = 'ftp://hajri.example.com'
    doc.cloud.concurrency = 0
    doc.log = { level: 'verbose' }
    doc.devices = [
      { id: 'a', serial: { path: '/dev/ttyS0' } },
      { id: 'b', serial: { path: '/dev/ttyS1', baudRate: 10, parity: 'weird', dataBits: 9 } },
      { id: 'a', serial: { path: '/dev/ttyS2', baudrate: 9600 } },
    ]
    const error = await files.failure(doc)
    expect(byPath(error.problems)).toEqual({
      'site.id': 'must start with a letter or digit and hold only letters, digits, ".", "_" and "-"',
      'cloud.url': 'must be a URL starting with https:// (or http://), e.g. https://hajri.example.com',
      'cloud.concurrency': 'must be >= 1',
      'log.level': 'must be one of "fatal", "error", "warn", "info", "debug", "trace", "silent"',
      'devices[1].serial.baudRate': 'must be >= 50',
      'devices[1].serial.parity': 'must be one of "none", "even", "odd", "mark", "space"',
      'devices[1].serial.dataBits': 'must be one of 5, 6, 7, 8',
      'devices[2].id': 'is also the id of devices[0]: device ids must be unique',
      'devices[2].serial.baudrate':
        'is not a known setting (did you mean baudRate?); known here: path, baudRate, dataBits, parity, stopBits, framing, format, csv',
    })
    expect(error.problems).toHaveLength(9)
    // The error's message lists them too, for a log line.
    expect(error.message).toContain('9 problems')
    expect(error.message).toContain('devices[1].serial.baudRate: must be >= 50')
    expect(error.code).toBe('config_invalid')
  })

  it('reports missing required settings, and the wrong type of a whole section', async () => {
    const problems = byPath(
      await files.problems({ site: { timezone: 'UTC' }, cloud: 'https://x', devices: [] }),
    )
    expect(problems).toEqual({
      'site.id': 'is required',
      cloud: 'must be a mapping (key: value)',
      devices: 'must list at least one',
    })
  })

  it('explains a value that fits no branch of a union as a whole', async () => {
    const doc = minimalDoc()
    doc.spool = { maxBytes: true }
    doc.devices[0].serial.stopBits = 3
    doc.devices.push({ id: 'b', serial: { path: '/dev/ttyS1', framing: { delimiter: ';' } } })
    doc.devices.push({ id: 'c', serial: { path: '/dev/ttyS2', framing: 'stx-etx' } })
    doc.devices.push({
      id: 'd',
      serial: { path: '/dev/ttyS3', framing: { type: 'stx-etx', delimiter: ';' } },
    })
    expect(byPath(await files.problems(doc))).toEqual({
      'spool.maxBytes':
        'must be a whole number of bytes or a size such as 2GiB, 512MiB or 500MB (KiB, MiB, GiB, TiB: powers of 1024; KB, MB, GB, TB: of 1000)',
      'devices[0].serial.stopBits': 'must be one of 1, 1.5, 2',
      'devices[1].serial.framing.type': 'is required: one of "line", "stx-etx"',
      'devices[2].serial.framing': 'must be a mapping with type: "line" or "stx-etx"',
      // The value says which branch it meant: that branch's own complaint.
      'devices[3].serial.framing.delimiter': 'is not a known setting; known here: type',
    })
  })

  it('asks for quotes where YAML read a number or a boolean instead of text', async () => {
    const doc = minimalDoc()
    doc.cloud.clientId = 12345
    doc.devices[0].id = true
    expect(byPath(await files.problems(doc))).toEqual({
      'cloud.clientId':
        'must be text (in YAML, put a value that looks like a number or true/false in quotes)',
      'devices[0].id': 'must be text (in YAML, put a value that looks like a number or true/false in quotes)',
    })
  })

  it('refuses statusMap keys that are not status numbers, and values that are not IN or OUT', async () => {
    const doc = minimalDoc()
    doc.devices[0].statusMap = { 0: 'IN', '01': 'OUT', check: 'IN', 2: 'BREAK' }
    expect(byPath(await files.problems(doc))).toEqual({
      'devices[0].statusMap["01"]':
        'is not allowed here: a key here must be a device status number from 0 to 999, without leading zeros',
      'devices[0].statusMap.check':
        'is not allowed here: a key here must be a device status number from 0 to 999, without leading zeros',
      'devices[0].statusMap["2"]': 'must be one of "IN", "OUT"',
    })
  })

  it('gives the line of each problem in the file, in file order', async () => {
    const text = [
      'site:', //                                1
      '  id: pune', //                           2
      '  timezone: Nowhere/Land', //             3
      'cloud:', //                               4
      '  url: https://hajri.example.com', //     5
      '  clientId: hjc_1', //                    6
      '  clientSecret: x', //                    7
      'devices:', //                             8
      '  - id: a', //                            9
      '    serial:', //                          10
      '      path: /dev/ttyS0', //               11
      '      baudRate: 1', //                    12
      '  - id: b', //                            13
      '', //                                     14
    ].join('\n')
    const problems = await files.problems(text)
    expect(problems).toEqual([
      { path: 'site.timezone', message: expect.any(String), line: 3 },
      { path: 'devices[0].serial.baudRate', message: 'must be >= 50', line: 12 },
      { path: 'devices[1]', message: expect.any(String), line: 13 },
    ])
  })
})

describe('loadAgentConfig: YAML', () => {
  it('reports a syntax error with its line and column, and stops there', async () => {
    const text = 'site:\n  id: pune\ncloud:\n  url: "https://hajri.example.com\n  clientId: x\n'
    const problems = await files.problems(text)
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatchObject({
      path: expect.stringMatching(/^line \d+, column \d+$/),
      line: expect.any(Number),
    })
    expect(problems[0]?.message).toMatch(/quote/)
  })

  it('reports a repeated key, a tab indent and a second document', async () => {
    const repeated = await files.problems('site:\n  id: a\n  id: b\n')
    expect(repeated).toEqual([
      { path: 'line 3, column 3', message: 'a key is written twice in the same mapping', line: 3 },
    ])
    const tab = await files.problems('site:\n\tid: a\n')
    expect(tab[0]).toMatchObject({ line: 2 })
    const twoDocs = await files.problems('site: {id: a}\n---\nsite: {id: b}\n')
    expect(twoDocs[0]?.message).toBe(
      'the file holds more than one YAML document (a second "---"); the agent reads one',
    )
  })

  it('reports an empty file, and a file that is not a mapping', async () => {
    expect(await files.problems('# nothing yet\n')).toEqual([
      { path: '(top level)', message: 'the file holds no settings: see deploy/agent.example.yaml' },
    ])
    expect(byPath(await files.problems('- a\n- b\n'))).toEqual({
      '(top level)': 'must be a mapping (key: value)',
    })
  })

  it('allows anchors and merge keys, and refuses an alias that contains itself', async () => {
    const shared = [
      'site: {id: pune}',
      `cloud: {url: "https://hajri.example.com", clientId: c, clientSecret: s}`,
      'serial-defaults: &serial {baudRate: 19200, parity: even}',
    ]
    const merged = [
      'site: {id: pune}',
      `cloud: {url: "https://hajri.example.com", clientId: c, clientSecret: s}`,
      'devices:',
      '  - id: a',
      '    serial: &serial {path: /dev/ttyS0, baudRate: 19200, parity: even}',
      '  - id: b',
      '    serial:',
      '      <<: *serial',
      '      path: /dev/ttyS1',
    ].join('\n')
    const config = await files.load(merged)
    expect(config.devices.map((d) => [d.serial?.path, d.serial?.baudRate, d.serial?.parity])).toEqual([
      ['/dev/ttyS0', 19200, 'even'],
      ['/dev/ttyS1', 19200, 'even'],
    ])
    // An unknown top-level key stays an error, even when it only holds an anchor.
    expect(
      byPath(await files.problems([...shared, 'devices: [{id: a, serial: {path: x}}]'].join('\n'))),
    ).toEqual({
      'serial-defaults': expect.stringMatching(/^is not a known setting/),
    })
    const cyclic = await files.problems(
      [...shared.slice(0, 2), 'devices: &d [{id: a, serial: {path: x}}, *d]'].join('\n'),
    )
    expect(byPath(cyclic)).toEqual({ 'devices[1]': 'is a YAML alias of a mapping or list that contains it' })
  })

  it('refuses a tagged value that is not plain data', async () => {
    const text = `site: {id: pune}\ncloud: {url: "https://h.example", clientId: c, clientSecret: !!binary aGVsbG8=}\ndevices: [{id: a, serial: {path: x}}]\n`
    expect(byPath(await files.problems(text))).toEqual({
      'cloud.clientSecret': 'is not plain YAML data (tags such as !!binary are not supported)',
    })
  })
})

describe('loadAgentConfig: secrets stay out of messages', () => {
  it('never repeats a secret, whatever is wrong around it', async () => {
    const userPassword = 'mqtt-PW-7f3k'
    const envSecret = 'env-S3cret-q9'
    const filePassword = 'file-PW-c4x1'
    // Written as passwordFile by mistake: the file's name is then the secret.
    const slipped = 'slip-PW-9d2m'
    await files.write('broker.pass', `${filePassword}\n`)
    const doc = minimalDoc()
    doc.cloud = {
      url: `https://agent:${CLIENT_SECRET}@hajri.example.com`,
      clientId: 'hjc_1',
      clientSecret: CLIENT_SECRET,
      clientSecretFile: 'broker.pass',
    }
    doc.mqtt = {
      embedded: {
        users: [
          { username: 'a', password: userPassword, passwordFile: 'broker.pass' },
          { username: 'b', password: 12345678 },
          { username: 'd', passwordFile: slipped },
          { username: 'e', passwordFile: `/etc/hajri/${slipped}` },
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a ${NAME} reference, substituted by the loader.
          { username: 'c', password: '${FROM_ENV}${UNSET}' },
        ],
      },
      external: { url: 'mqtt://b', clientId: 'x', password: filePassword },
    }
    doc.devices[0].serial.path = '${FROM_ENV'
    const error = await files.failure(doc, { FROM_ENV: envSecret })
    expect(error.problems.length).toBeGreaterThanOrEqual(7)
    const everything = `${error.message}\n${JSON.stringify(error.problems)}`
    for (const secret of [CLIENT_SECRET, userPassword, envSecret, filePassword, slipped, '12345678']) {
      expect(everything).not.toContain(secret)
    }
  })

  it('does not quote the file around a YAML syntax error', async () => {
    const secret = 'quoted-S3cret-z7'
    const text = `site: {id: pune}\ncloud:\n  clientSecret: "${secret}\n  url: x\n  clientId: ${secret}: ${secret}\n`
    const error = await files.failure(text)
    expect(JSON.stringify(error.problems)).not.toContain(secret)
    expect(error.message).not.toContain(secret)
  })

  it('is a ConfigFileError carrying the file', async () => {
    const error = await files.failure('site: [')
    expect(error).toBeInstanceOf(ConfigFileError)
    expect(error.file).toBe(`${files.dir}/agent.yaml`)
  })
})
