/**
 * What `npm start` prints (docs/decisions/0059-npm-start-is-a-demo.md): the banner for each state of the
 * owner's password, and the agent's and the simulated device's output turned into a few readable lines.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AgentActivity } from '../../../cloud/demo/demo-activity.js'
import { AGENT_RUNNING, isWorthShowing, parseAgentLogLine } from '../../../cloud/demo/demo-agent-log.js'
import { type BannerInput, demoBanner } from '../../../cloud/demo/demo-banner.js'
import { reachableUrl, simulatorLine } from '../../../cloud/demo/demo-runner.js'

const INPUT: BannerInput = {
  dataDir: './data',
  credentialsFile: 'data/demo-credentials.json',
  cloudUrl: 'http://127.0.0.1:8080',
  ownerEmail: 'demo@hajri.local',
  owner: { kind: 'one-time', password: 'qK2fEFgfvSR2beSJZCpP' },
  resetPasswordCommand: 'node dist/cloud/cli.js user reset-password --tenant ten_1 demo@hajri.local',
  apiKey: 'hjk_BRd11CGjcOHGIxyEdPiywSVp9SFoaC45ZglS',
  punchCommand:
    'node dist/agent/main.js simulate --mqtt mqtt://127.0.0.1:1884 --topic punches/demo-gate --employees E004',
  simulated: { employees: ['E001', 'E002', 'E003'], every: '20s' },
}

describe('the banner', () => {
  it('shows the console login, the key, the curl example and the punch command', () => {
    expect(demoBanner(INPUT)).toBe(
      [
        'Hajri demo is running (data in ./data; Ctrl-C stops it)',
        '  Console   http://127.0.0.1:8080/console/   demo@hajri.local / qK2fEFgfvSR2beSJZCpP   (you choose your own at the first sign-in)',
        '  API key   hjk_BRd11CGjcOHGIxyEdPiywSVp9SFoaC45ZglS',
        '  Employees curl -H "Authorization: Bearer hjk_BRd11CGjcOHGIxyEdPiywSVp9SFoaC45ZglS" http://127.0.0.1:8080/api/public/v1/employees',
        '  Punch     node dist/agent/main.js simulate --mqtt mqtt://127.0.0.1:1884 --topic punches/demo-gate --employees E004',
        '  Punches   curl -H "Authorization: Bearer hjk_BRd11CGjcOHGIxyEdPiywSVp9SFoaC45ZglS" http://127.0.0.1:8080/api/public/v1/attendance/punches',
        '  API docs  http://127.0.0.1:8080/docs',
        'A simulated device punches E001, E002 and E003 every 20s; the agent forwards them.',
        'Credentials are also in data/demo-credentials.json.',
        '',
      ].join('\n'),
    )
  })

  it('once the owner has chosen a password, says so and how to reset it; never an old password', () => {
    const chosen = demoBanner({ ...INPUT, owner: { kind: 'chosen' } })
    expect(chosen).toContain(
      '  Console   http://127.0.0.1:8080/console/   demo@hajri.local / the password you set at first sign-in\n' +
        '            forgot it? node dist/cloud/cli.js user reset-password --tenant ten_1 demo@hajri.local\n',
    )
    expect(chosen).not.toContain('qK2fEFgfvSR2beSJZCpP')
    const unknown = demoBanner({ ...INPUT, owner: { kind: 'unknown' } })
    expect(unknown).toContain('demo@hajri.local / a password this demo does not know; a new one-time one:\n')
    expect(unknown).toContain('            node dist/cloud/cli.js user reset-password')
  })

  it('gives a wildcard listen address as loopback, and brackets IPv6', () => {
    expect(reachableUrl('0.0.0.0', 8080)).toBe('http://127.0.0.1:8080')
    expect(reachableUrl('::1', 8080)).toBe('http://[::1]:8080')
    expect(reachableUrl('192.168.1.20', 80)).toBe('http://192.168.1.20:80')
  })
})

describe("the agent's log lines", () => {
  const line = (record: object) =>
    parseAgentLogLine(JSON.stringify({ time: 1, app: 'hajri-agent', ...record }))

  it('shows warnings and errors with their detail, not info, and not the no-users warning the demo causes', () => {
    const running = line({ level: 30, msg: AGENT_RUNNING, site: 'demo-factory' })
    expect(running?.msg).toBe(AGENT_RUNNING)
    expect(running && isWorthShowing(running)).toBe(false)
    const failed = line({
      level: 40,
      msg: 'forwarding failed; will retry',
      err: { type: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:8080', code: 'ECONNREFUSED' },
    })
    expect(failed?.text).toBe('forwarding failed; will retry: connect ECONNREFUSED 127.0.0.1:8080')
    expect(failed && isWorthShowing(failed)).toBe(true)
    const parked = line({ level: 40, msg: 'punch parked', deviceId: 'demo-gate', error: 'bad JSON' })
    expect(parked?.text).toBe('punch parked: bad JSON; device demo-gate')
    const noUsers = line({
      level: 40,
      msg: 'no mqtt.embedded.users: any client may connect and publish punches',
    })
    expect(noUsers && isWorthShowing(noUsers)).toBe(false)
    const taken = line({
      level: 60,
      msg: 'the agent could not start',
      err: { code: 'EADDRINUSE', port: 1884 },
    })
    expect(taken?.err).toEqual({ code: 'EADDRINUSE', port: 1884 })
    expect(parseAgentLogLine('    at Gateway.start (gateway.js:10:3)')).toBeUndefined()
  })

  it("shows only the simulated device's troubles", () => {
    expect(
      simulatorLine(
        'hajri-agent simulate: a punch every 20 s or so to mqtt://127.0.0.1:1884 as json; Ctrl-C stops',
        'stderr',
      ),
    ).toBeUndefined()
    expect(
      simulatorLine(
        'hajri-agent simulate: lost the connection to mqtt://127.0.0.1:1884; reconnecting',
        'stderr',
      ),
    ).toBe('lost the connection to mqtt://127.0.0.1:1884; reconnecting')
    const punch = { event: 'punch', employeeCode: 'E001', punchType: 'IN', punchedAt: 'x' }
    expect(simulatorLine(JSON.stringify({ ...punch, acknowledged: true }), 'stdout')).toBeUndefined()
    expect(
      simulatorLine(JSON.stringify({ ...punch, acknowledged: false, error: 'timed out' }), 'stdout'),
    ).toBe('a punch of E001 was not acknowledged: timed out')
  })
})

describe("the agent's activity", () => {
  let server: Server
  let status = { forwarding: { forwarded: 0 }, deadLetters: { count: 2 } }
  let statusUrl = ''
  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url !== '/status') return response.writeHead(404).end()
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(status))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    statusUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it('says how many punches were forwarded since the last look, and dead letters as they come', async () => {
    const said: string[] = []
    const activity = new AgentActivity({
      statusUrl,
      intervalMs: 60_000,
      say: (text) => said.push(text),
      deadLettersCommand: 'node dist/agent/main.js dead-letters list --url x',
    })
    await activity.poll()
    status = { forwarding: { forwarded: 0 }, deadLetters: { count: 2 } }
    await activity.poll()
    status = { forwarding: { forwarded: 3 }, deadLetters: { count: 3 } }
    await activity.poll()
    status = { forwarding: { forwarded: 4 }, deadLetters: { count: 3 } }
    await activity.poll()
    expect(said).toEqual([
      'agent: 2 punches in dead letters; see node dist/agent/main.js dead-letters list --url x',
      'agent: forwarded 3 punches to the cloud (3 since it started)',
      'agent: 1 punch newly parked in dead letters; see node dist/agent/main.js dead-letters list --url x',
      'agent: forwarded 1 punch to the cloud (4 since it started)',
    ])
    // Nothing listening: nothing said, nothing thrown.
    const silent = new AgentActivity({
      statusUrl: 'http://127.0.0.1:1',
      intervalMs: 60_000,
      say: (text) => said.push(text),
      deadLettersCommand: '',
    })
    await silent.poll()
    expect(said).toHaveLength(4)
  })
})
