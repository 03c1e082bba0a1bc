/**
 * `npm start` (docs/decisions/0059-npm-start-is-a-demo.md) driven as a child process: the test waits for the
 * printed URL, sends a punch with the printed command, sees it in the cloud, and stops the process
 * with SIGINT.
 *
 * `npm start` runs in the repository as a newcomer runs it (after `npm ci`, which builds dist/), on a
 * SQLite file in a temporary directory (HAJRI_DATABASE_URL), so the demo's files go there and never
 * to the repository's ./data, and on free ports. It is its own process group (`detached`), and is
 * stopped by SIGINT to that group: what Ctrl-C in a terminal does to the foreground job, so npm, the
 * demo, its agent and its simulated device all receive it at once.
 *
 * Then a second `npm start` on the same directory must reuse everything: the same tenant and key,
 * the earlier punch still there, no second tenant.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../../cloud/db/database.js'
import { freePort, waitFor } from '../../support/e2e-kit.js'

const REPO = fileURLToPath(new URL('../../../', import.meta.url))
/** What `npm start` runs, compiled by `npm ci` (prepare: npm run build). */
const DEMO_COMMAND_JS = join(REPO, 'dist/cloud/commands/demo-command.js')
/** Generous bounds for a loaded machine: they end a hang, they never measure speed. */
const START_TIMEOUT_MS = 240_000
const STEP_TIMEOUT_MS = 120_000
/** An employee of the demo the simulated device never punches (it punches E001 to E003). */
const OUR_EMPLOYEE = 'E007'

interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}

/** `npm start` in its own process group, its output kept. */
class NpmStart {
  readonly child: ChildProcess
  stdout = ''
  stderr = ''
  readonly exited: Promise<Exit>

  constructor(env: Record<string, string>) {
    this.child = spawn('npm', ['start'], {
      cwd: REPO,
      env: { ...process.env, ...env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    this.child.stdout?.setEncoding('utf8').on('data', (text: string) => {
      this.stdout += text
    })
    this.child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      this.stderr += text
    })
    this.exited = new Promise((resolve) => {
      this.child.once('close', (code, signal) => resolve({ code, signal }))
    })
  }

  get output(): string {
    return `--- stdout ---\n${this.stdout}\n--- stderr ---\n${this.stderr}`
  }

  /** Every process of the group (npm, sh, the demo, the agent, the simulated device) has exited. */
  groupGone(): boolean {
    try {
      process.kill(-(this.child.pid as number), 0)
      return false
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'ESRCH'
    }
  }

  /** Waits for the whole banner (its last line), failing early with the output if npm exits first. */
  async banner(): Promise<string> {
    let exit: Exit | undefined
    this.exited.then((e) => {
      exit = e
    })
    await waitFor(
      () => {
        if (exit)
          throw new Error(`npm start exited (${JSON.stringify(exit)}) before the banner:\n${this.output}`)
        return /^Credentials are also in .*$/m.test(this.stdout)
      },
      'the banner of npm start',
      { timeoutMs: START_TIMEOUT_MS, intervalMs: 200, describe: () => this.output },
    )
    return this.stdout
  }

  /** Ctrl-C in a terminal: SIGINT to the foreground process group. */
  async interrupt(): Promise<Exit> {
    process.kill(-(this.child.pid as number), 'SIGINT')
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(new Error(`npm start still running ${STEP_TIMEOUT_MS} ms after SIGINT:\n${this.output}`)),
        STEP_TIMEOUT_MS,
      )
    })
    try {
      return await Promise.race([this.exited, timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  /** Whatever happened to the test, nothing of the group is left behind. */
  killGroup(): void {
    try {
      process.kill(-(this.child.pid as number), 'SIGKILL')
    } catch {}
  }
}

interface Banner {
  consoleUrl: string
  email: string
  password: string
  apiKey: string
  employeesCurl: string
  punchCommand: string
  credentialsFile: string
}

function parseBanner(text: string): Banner {
  const match = (re: RegExp, what: string): RegExpMatchArray => {
    const m = text.match(re)
    if (!m) throw new Error(`no ${what} in the banner:\n${text}`)
    return m
  }
  const login = match(/^ {2}Console +(http:\/\/\S+\/console\/) +(\S+) \/ (\S+)/m, 'console line')
  return {
    consoleUrl: login[1] as string,
    email: login[2] as string,
    password: login[3] as string,
    apiKey: match(/^ {2}API key +(hjk_\S+)$/m, 'API key')[1] as string,
    employeesCurl: match(/^ {2}Employees +(curl .+)$/m, 'employee list example')[1] as string,
    punchCommand: match(/^ {2}Punch +(node .+)$/m, 'punch command')[1] as string,
    credentialsFile: match(/^Credentials are also in (.+)\.$/m, 'credentials file')[1] as string,
  }
}

/** Runs a printed `node ...` command line (no quoting in it) from the repository, as a reader would. */
async function runPrinted(commandLine: string): Promise<{ code: number | null; output: string }> {
  const [program, ...args] = commandLine.split(' ')
  expect(program).toBe('node')
  const child = spawn(process.execPath, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (t: string) => {
    output += t
  })
  child.stderr.setEncoding('utf8').on('data', (t: string) => {
    output += t
  })
  let timer: NodeJS.Timeout | undefined
  try {
    const code = await Promise.race([
      new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c))),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${commandLine} still running:\n${output}`)),
          STEP_TIMEOUT_MS,
        )
      }),
    ])
    return { code, output }
  } finally {
    clearTimeout(timer)
    child.kill('SIGKILL')
  }
}

interface PunchView {
  id: string
  employeeCode: string
  deviceId: string | null
}

async function listPunches(baseUrl: string, apiKey: string, employeeCode: string): Promise<PunchView[]> {
  const response = await fetch(`${baseUrl}/api/public/v1/attendance/punches?employeeCode=${employeeCode}`, {
    headers: { authorization: `Bearer ${apiKey}` },
    signal: AbortSignal.timeout(10_000),
  })
  expect(response.status).toBe(200)
  return ((await response.json()) as { data: PunchView[] }).data
}

/** Whether something listens on 127.0.0.1:`port` (the demo's parts once stopped must not). */
async function listening(port: number): Promise<boolean> {
  const net = await import('node:net')
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/** SIGINT to the group, then: a clean stop of the demo, and nothing of it left running. */
async function expectCleanStop(run: NpmStart, ports: number[]): Promise<void> {
  const exit = await run.interrupt()
  // npm passes the signal on to the script, waits for it, then ends itself by the same signal, as
  // a shell expects of a program stopped by Ctrl-C; so npm's own exit is 0 or "killed by SIGINT". The
  // demo's status shows in its last line, printed only on a clean stop with exit status 0.
  expect(exit.code === 0 || exit.signal === 'SIGINT', `${JSON.stringify(exit)}\n${run.output}`).toBe(true)
  expect(run.stdout, run.output).toMatch(/^Hajri demo stopped\.$/m)
  expect(run.stderr, run.output).not.toMatch(/unexpectedly|stopping failed|stopping at once/)
  await waitFor(() => run.groupGone(), 'every process of npm start to exit', {
    timeoutMs: STEP_TIMEOUT_MS,
    describe: () => run.output,
  })
  for (const port of ports) expect(await listening(port), `port ${port} still open`).toBe(false)
}

describe('npm start: the demo', () => {
  const runs: NpmStart[] = []
  let dir: string | undefined
  afterAll(async () => {
    for (const run of runs) run.killGroup()
    if (dir && process.env.HAJRI_E2E_KEEP !== '1') await rm(dir, { recursive: true, force: true })
  })

  it('starts the cloud, agent and device; a printed punch reaches the cloud; Ctrl-C stops all; a second start reuses the data', {
    timeout: 900_000,
  }, async () => {
    if (!existsSync(DEMO_COMMAND_JS))
      throw new Error(`${DEMO_COMMAND_JS} is missing: dist/ is built by npm ci (or npm run build)`)
    dir = await mkdtemp(join(tmpdir(), 'hajri-npm-start-'))
    const ports: number[] = []
    while (ports.length < 3) {
      const port = await freePort()
      if (!ports.includes(port)) ports.push(port)
    }
    const [cloudPort, mqttPort, statusPort] = ports as [number, number, number]
    const env = {
      HAJRI_DATABASE_URL: `sqlite:${join(dir, 'hajri.db')}`,
      HAJRI_PORT: String(cloudPort),
      HAJRI_DEMO_MQTT_PORT: String(mqttPort),
      HAJRI_DEMO_STATUS_PORT: String(statusPort),
    }
    const baseUrl = `http://127.0.0.1:${cloudPort}`

    // First run: seeds, prints, and the printed punch command reaches the cloud through the agent.
    const first = new NpmStart(env)
    runs.push(first)
    const banner = parseBanner(await first.banner())
    expect(first.stdout, first.output).toMatch(/^demo: tenant ten_\S+ created/m)
    expect(banner.consoleUrl).toBe(`${baseUrl}/console/`)
    expect(banner.email).toBe('demo@hajri.local')
    expect(banner.employeesCurl).toBe(
      `curl -H "Authorization: Bearer ${banner.apiKey}" ${baseUrl}/api/public/v1/employees`,
    )
    expect(banner.punchCommand).toMatch(
      new RegExp(
        `^node dist/agent/main\\.js simulate --mqtt mqtt://127\\.0\\.0\\.1:${mqttPort} --topic punches/demo-gate --employees E\\d{3}$`,
      ),
    )

    // The credentials file says what the banner says, and only its owner can read it.
    const credentialsFile = join(dir, 'demo-credentials.json')
    expect(banner.credentialsFile).toBe(credentialsFile)
    expect((await stat(credentialsFile)).mode & 0o777).toBe(0o600)
    const credentials = JSON.parse(await readFile(credentialsFile, 'utf8'))
    expect(credentials).toMatchObject({
      tenant: { name: 'Demo Factory' },
      owner: { email: banner.email, oneTimePassword: banner.password },
      apiKey: { key: banner.apiKey },
      urls: { console: banner.consoleUrl },
    })
    expect(credentials.agent.clientSecret).toMatch(/^hjs_/)

    // The printed curl example works: the sample employees, E007 among them.
    const employees = await fetch(`${baseUrl}/api/public/v1/employees`, {
      headers: { authorization: `Bearer ${banner.apiKey}` },
    })
    expect(employees.status).toBe(200)
    const codes = ((await employees.json()) as { data: { employeeCode: string }[] }).data.map(
      (e) => e.employeeCode,
    )
    expect(codes).toHaveLength(8)
    expect(codes).toContain(OUR_EMPLOYEE)

    // The printed punch command, for an employee the simulated device leaves alone.
    const punch = await runPrinted(
      banner.punchCommand.replace(/--employees \S+$/, `--employees ${OUR_EMPLOYEE}`),
    )
    expect(punch.code, punch.output).toBe(0)
    const [stored] = await waitFor(
      async () => {
        const punches = await listPunches(baseUrl, banner.apiKey, OUR_EMPLOYEE)
        return punches.length > 0 ? punches : undefined
      },
      `the punch of ${OUR_EMPLOYEE} in the cloud`,
      { timeoutMs: STEP_TIMEOUT_MS, intervalMs: 250, describe: () => first.output },
    )
    expect(stored).toMatchObject({ employeeCode: OUR_EMPLOYEE, deviceId: 'demo-gate' })

    await expectCleanStop(first, ports)
    expect(existsSync(join(dir, 'demo-agent', 'spool')), 'the agent spool directory').toBe(true)

    // Second run, same directory: the same tenant and credentials, the punch still there.
    const second = new NpmStart(env)
    runs.push(second)
    const again = parseBanner(await second.banner())
    expect(second.stdout, second.output).not.toMatch(/^demo: /m)
    expect(again.apiKey).toBe(banner.apiKey)
    expect(again.password).toBe(banner.password)
    const credentialsAgain = JSON.parse(await readFile(credentialsFile, 'utf8'))
    expect(credentialsAgain.tenant.id).toBe(credentials.tenant.id)
    expect(credentialsAgain.agent).toEqual(credentials.agent)
    expect((await listPunches(baseUrl, again.apiKey, OUR_EMPLOYEE)).map((p) => p.id)).toEqual([stored?.id])
    await expectCleanStop(second, ports)

    // One tenant in the database: the second run made none.
    const database = openDatabase(env.HAJRI_DATABASE_URL)
    try {
      const tenants = await database.db.selectFrom('tenants').select(['id', 'name']).execute()
      expect(tenants).toEqual([{ id: credentials.tenant.id, name: 'Demo Factory' }])
    } finally {
      await database.close()
    }
  })
})
