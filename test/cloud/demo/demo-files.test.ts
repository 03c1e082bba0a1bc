/**
 * The files `npm start` keeps beside the database (docs/decisions/0059-npm-start-is-a-demo.md):
 * demo-credentials.json, and the agent's configuration and client secret, which the real agent must accept as
 * they are written.
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadAgentConfig } from '../../../agent/config/load.js'
import { loadCloudConfig } from '../../../cloud/config.js'
import {
  agentEntry,
  DEMO_PUNCH_TOPIC,
  shownCommand,
  simulateArgs,
  writeAgentFiles,
} from '../../../cloud/demo/demo-agent.js'
import {
  type DemoCredentials,
  readDemoCredentials,
  writeDemoCredentials,
} from '../../../cloud/demo/demo-credentials.js'
import { loadDemoSettings } from '../../../cloud/demo/demo-settings.js'

const CREDENTIALS: DemoCredentials = {
  tenant: { id: 'ten_01M7YP768VDMDMPWRN534GS9BH', name: 'Demo Factory' },
  owner: { email: 'demo@hajri.local', oneTimePassword: 'qK2fEFgfvSR2beSJZCpP' },
  agent: { appId: 'app_1', clientId: 'hjc_client', clientSecret: 'hjs_secret' },
  apiKey: { id: 'key_1', key: 'hjk_key' },
}

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hajri-demo-files-'))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

describe('demo-credentials.json', () => {
  it('is written readable by its owner only, and read back as written', async () => {
    const file = join(dir, 'data', 'demo-credentials.json')
    // A file left readable by others (an older copy, a hand edit) is tightened when rewritten.
    await mkdir(join(dir, 'data'))
    await writeFile(file, '{}', { mode: 0o644 })
    await writeDemoCredentials(file, CREDENTIALS)
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    expect(await readDemoCredentials(file, () => {})).toEqual(CREDENTIALS)
    const { credentialsFile } = loadDemoSettings(
      { HAJRI_DATABASE_URL: `sqlite:${join(dir, 'data', 'hajri.db')}` },
      dir,
      loadCloudConfig({ HAJRI_DATABASE_URL: `sqlite:${join(dir, 'data', 'hajri.db')}` }),
    )
    expect(credentialsFile).toBe(file)
  })

  it('is absent when there is no file, and reported and treated as absent when it is not ours', async () => {
    const reasons: string[] = []
    expect(await readDemoCredentials(join(dir, 'none.json'), (r) => reasons.push(r))).toBeUndefined()
    expect(reasons).toEqual([])
    const broken = join(dir, 'broken.json')
    await writeFile(broken, '{"tenant": ')
    expect(await readDemoCredentials(broken, (r) => reasons.push(r))).toBeUndefined()
    await writeFile(broken, JSON.stringify({ tenant: { id: 'ten_1' }, owner: { email: 5 } }))
    expect(await readDemoCredentials(broken, (r) => reasons.push(r))).toBeUndefined()
    expect(reasons).toEqual([expect.stringMatching(/^not JSON/), 'not in the form npm start writes'])
  })
})

describe('demo settings', () => {
  const settings = (env: NodeJS.ProcessEnv) => loadDemoSettings(env, '/home/me/hajri', loadCloudConfig(env))

  it('keeps the demo beside the SQLite database, on ports that leave 1883 and 9410 alone', () => {
    expect(settings({})).toMatchObject({
      dataDir: '/home/me/hajri/data',
      dataDirShown: './data',
      credentialsFile: '/home/me/hajri/data/demo-credentials.json',
      agentDir: '/home/me/hajri/data/demo-agent',
      mqttPort: 1884,
      statusPort: 9411,
    })
    expect(settings({ HAJRI_DATABASE_URL: 'sqlite:/var/lib/hajri/db.sqlite' })).toMatchObject({
      dataDir: '/var/lib/hajri',
      dataDirShown: '/var/lib/hajri',
    })
    // PostgreSQL has no directory: ./data.
    const pg = settings({ HAJRI_DATABASE_URL: 'postgres://h@db/hajri', HAJRI_DEMO_MQTT_PORT: '2883' })
    expect(pg).toMatchObject({ dataDir: '/home/me/hajri/data', mqttPort: 2883 })
  })

  it('names the variable of every bad setting', () => {
    expect(() =>
      settings({
        HAJRI_DEMO_MQTT_PORT: 'mqtt',
        HAJRI_DEMO_STATUS_PORT: '0',
        HAJRI_DATABASE_URL: 'sqlite::memory:',
      }),
    ).toThrow(
      /HAJRI_DATABASE_URL: the demo keeps its data[^\n]*\n.*HAJRI_DEMO_MQTT_PORT: must be a port number from 1 to 65535, got "mqtt"\n.*HAJRI_DEMO_STATUS_PORT: must be a port number/,
    )
    expect(() => settings({ HAJRI_DEMO_MQTT_PORT: '9411' })).toThrow(/they must differ/)
  })
})

describe("the demo agent's files", () => {
  it('are a configuration the agent accepts, with the secret in a file of mode 0600', async () => {
    const agentDir = join(dir, 'demo-agent')
    const configFile = await writeAgentFiles(agentDir, {
      cloudUrl: 'http://127.0.0.1:8080',
      clientId: 'hjc_0rcPMYOIotUMEhAyhGgtRade',
      clientSecret: 'hjs_XnwrjtYO5NNiqsmRvAddTMFh7KiJyqj0MoTcgGVD3tJuxO',
      mqttPort: 1884,
      statusPort: 9411,
    })
    expect((await stat(join(agentDir, 'client-secret'))).mode & 0o777).toBe(0o600)
    expect(await readFile(configFile, 'utf8')).not.toContain('hjs_')
    const config = await loadAgentConfig(configFile, {})
    expect(config).toMatchObject({
      cloud: {
        url: 'http://127.0.0.1:8080',
        clientId: 'hjc_0rcPMYOIotUMEhAyhGgtRade',
        clientSecret: 'hjs_XnwrjtYO5NNiqsmRvAddTMFh7KiJyqj0MoTcgGVD3tJuxO',
      },
      spool: { dir: join(agentDir, 'spool') },
      status: { listen: '127.0.0.1:9411' },
      log: { pretty: false },
      mqtt: { embedded: { host: '127.0.0.1', port: 1884, users: [] } },
      devices: [{ id: 'demo-gate', mqtt: { topic: DEMO_PUNCH_TOPIC, format: 'json' } }],
    })
  })

  it('reach a cloud at a LAN address over plain http only by saying so (allowInsecure)', async () => {
    const agentDir = join(dir, 'demo-agent-lan')
    const files = {
      clientId: 'hjc_0rcPMYOIotUMEhAyhGgtRade',
      clientSecret: 'hjs_XnwrjtYO5NNiqsmRvAddTMFh7KiJyqj0MoTcgGVD3tJuxO',
      mqttPort: 1884,
      statusPort: 9411,
    }
    const lan = await loadAgentConfig(
      await writeAgentFiles(agentDir, { ...files, cloudUrl: 'http://192.168.1.20:8080' }),
      {},
    )
    expect(lan.cloud).toMatchObject({ url: 'http://192.168.1.20:8080', allowInsecure: true })
    const local = await loadAgentConfig(
      await writeAgentFiles(agentDir, { ...files, cloudUrl: 'http://[::1]:8080' }),
      {},
    )
    expect(local.cloud.allowInsecure).toBe(false)
  })

  it('run hajri-agent from dist/ beside the compiled cloud, or from source beside the .ts', () => {
    const compiled = agentEntry(pathToFileURL('/opt/hajri/dist/cloud/demo/demo-agent.js').href)
    expect(compiled.prefix).toEqual(['/opt/hajri/dist/agent/main.js'])
    const args = simulateArgs(1884, ['E004'])
    expect(shownCommand(compiled, args, '/opt/hajri')).toBe(
      'node dist/agent/main.js simulate --mqtt mqtt://127.0.0.1:1884 --topic punches/demo-gate --employees E004',
    )
    expect(shownCommand(compiled, args, '/home/me')).toMatch(
      /^node \/opt\/hajri\/dist\/agent\/main\.js simulate /,
    )
    const source = agentEntry(pathToFileURL('/src/hajri/cloud/demo/demo-agent.ts').href)
    expect(source.prefix).toEqual(['--import', 'tsx', '/src/hajri/agent/main.ts'])
    expect(simulateArgs(1884, ['E001', 'E002'], '20s').slice(-4)).toEqual([
      '--employees',
      'E001,E002',
      '--every',
      '20s',
    ])
  })
})
