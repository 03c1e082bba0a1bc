import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stringify } from 'yaml'
import { CLIENT_SECRET, ConfigDir, EXAMPLE_ENV, exampleInto, minimalDoc } from '../config/config-fixture.js'
import { runAgent as agent } from './run-agent.js'

let files: ConfigDir
beforeAll(async () => {
  files = await ConfigDir.create()
})
afterAll(async () => {
  await files.remove()
})

/** A file with four problems, one of them next to a secret. */
function brokenDoc() {
  const doc = minimalDoc()
  doc.cloud.url = 'ftp://hajri.example.com'
  doc.spool = { maxBytes: '2 gigs' }
  doc.devices = [
    { id: 'a', serial: { path: '/dev/ttyS0', baudRate: 10 } },
    { id: 'a', serial: { path: '/dev/ttyS1' } },
  ]
  doc.mqtt = { embedded: { users: [{ username: 'gate-1', password: CLIENT_SECRET, passwordFile: 'x' }] } }
  return doc
}

describe('hajri-agent check-config', () => {
  it('prints ok and a summary for a valid file, and exits 0', async () => {
    await exampleInto(files)
    const result = await agent(files.dir, EXAMPLE_ENV, 'check-config', '--config', 'agent.yaml')
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toBe('')
    const lines = result.stdout.split('\n')
    expect(lines[0]).toBe(`ok: ${files.dir}/agent.yaml`)
    expect(lines).toContain('site     pune-plant-1 (Asia/Kolkata)')
    expect(lines).toContain('cloud    https://hajri.example.com as client hjc_pune_plant_1')
    expect(lines).toContain('mqtt     embedded broker on 0.0.0.0:1883, 2 user(s)')
    expect(lines).toContain('  gate-1: mqtt punches/gate-1 (json); ZKTeco status codes')
    expect(lines).toContain(
      '  entry-turnstile: serial /dev/ttyUSB1 19200 8E1, stx-etx framing (csv); always IN; UTC',
    )
    expect(lines).toContain('adms     listening on 0.0.0.0:8081 from any address, poll every 10 s')
    expect(lines).toContain(
      '  canteen-face: adms terminal CJDE193560303; ZKTeco status codes; PIN 42 → E0042',
    )
    expect(lines).toContain('spool    /var/lib/hajri-agent/spool (at most 2 GiB)')
    expect(lines).toContain('status   http://127.0.0.1:9410')
    for (const secret of Object.values(EXAMPLE_ENV)) expect(result.stdout).not.toContain(secret)
    expect(result.stdout).not.toContain('gate-1-pw')
  })

  it('prints every problem on a line of its own as path: message, and exits 2', async () => {
    await files.writeConfig(brokenDoc())
    const result = await agent(files.dir, {}, 'check-config', '--config', 'agent.yaml')
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    const lines = result.stderr.trimEnd().split('\n')
    expect(lines[0]).toBe(`hajri-agent: ${files.dir}/agent.yaml: 6 problems; the agent would not start`)
    // In the order of the file, so they can be read alongside it.
    expect(lines.slice(1).map((line) => line.replace(/ \(line \d+\)$/, ''))).toEqual([
      'cloud.url: must be a URL starting with https:// (or http://), e.g. https://hajri.example.com',
      'devices[0].serial.baudRate: must be >= 50',
      'devices[1].id: is also the id of devices[0]: device ids must be unique',
      'spool.maxBytes: must be a size such as 2GiB, 512MiB or 500MB (units B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), or a number of bytes',
      'mqtt.embedded.users[0]: has both password and passwordFile: keep one',
      `mqtt.embedded.users[0].passwordFile: names a file that does not exist (a relative path is read from ${files.dir})`,
    ])
    expect(lines.slice(1).every((line) => / \(line \d+\)$/.test(line))).toBe(true)
    expect(result.stderr).not.toContain(CLIENT_SECRET)
  })

  it('with --json, prints {ok, problems} for scripts', async () => {
    await files.writeConfig(brokenDoc())
    const failed = await agent(files.dir, {}, 'check-config', '--config', 'agent.yaml', '--json')
    expect(failed.code).toBe(2)
    expect(failed.stderr).toBe('')
    const report = JSON.parse(failed.stdout) as { ok: boolean; problems: { path: string; message: string }[] }
    expect(report.ok).toBe(false)
    expect(report.problems.map((p) => p.path).sort()).toEqual(
      [
        'cloud.url',
        'devices[0].serial.baudRate',
        'devices[1].id',
        'mqtt.embedded.users[0]',
        'mqtt.embedded.users[0].passwordFile',
        'spool.maxBytes',
      ].sort(),
    )
    expect(failed.stdout).not.toContain(CLIENT_SECRET)

    await files.writeConfig(minimalDoc())
    const passed = await agent(files.dir, {}, 'check-config', '--json', '-c', `${files.dir}/agent.yaml`)
    expect(passed.code, passed.stdout).toBe(0)
    const ok = JSON.parse(passed.stdout) as Record<string, unknown>
    expect(ok).toMatchObject({
      ok: true,
      problems: [],
      summary: {
        site: { id: 'pune-plant-1', timezone: 'Asia/Kolkata' },
        cloud: { url: 'https://hajri.example.com', clientId: 'hjc_test' },
        mqtt: null,
        devices: [{ id: 'main-door', transports: ['serial'], port: '/dev/ttyUSB0' }],
        spool: { dir: `${files.dir}/spool`, maxBytes: 2 * 1024 ** 3 },
      },
    })
    expect(passed.stdout).not.toContain(CLIENT_SECRET)
  })

  it('reports a YAML syntax error with its line and column', async () => {
    await files.writeConfig('site:\n  id: [pune\ncloud: {}\n')
    const result = await agent(files.dir, {}, 'check-config', '--config', 'agent.yaml')
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/^line \d+, column \d+: .+ \(line \d+\)$/m)
  })

  it('reports a file that does not exist as a problem of the file, exit 2', async () => {
    const result = await agent(files.dir, {}, 'check-config', '--config', 'missing.yaml')
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`${files.dir}/missing.yaml: does not exist`)
  })

  it('is a usage error without --config, with an operand or with an unknown option (exit 2)', async () => {
    for (const argv of [
      ['check-config'],
      ['check-config', 'agent.yaml'],
      ['check-config', '--config', 'agent.yaml', '--verbose'],
      ['check-config', '--config'],
    ]) {
      const result = await agent(files.dir, {}, ...argv)
      expect(result.code, argv.join(' ')).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr).toContain('Usage:')
    }
    const missing = await agent(files.dir, {}, 'check-config')
    expect(missing.stderr).toContain('hajri-agent: check-config needs --config FILE')
  })

  it('substitutes from the command environment', async () => {
    const doc = minimalDoc()
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a ${NAME} reference, substituted by the loader.
    doc.cloud.clientSecret = '${TEST_SECRET}'
    await files.write('env.yaml', stringify(doc))
    const unset = await agent(files.dir, {}, 'check-config', '--config', 'env.yaml')
    expect(unset.code).toBe(2)
    expect(unset.stderr).toContain(
      'cloud.clientSecret: uses the environment variable TEST_SECRET, which is not set (line',
    )
    const set = await agent(files.dir, { TEST_SECRET: 'from-env' }, 'check-config', '--config', 'env.yaml')
    expect(set.code, set.stderr).toBe(0)
    expect(set.stdout).not.toContain('from-env')
  })
})
