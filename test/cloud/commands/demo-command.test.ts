/**
 * `hajri-cloud demo` as a process (docs/decisions/0059-npm-start-is-a-demo.md), for what the `npm start` test
 * does not reach: a taken port is reported as the variable to change; SIGTERM to the demo alone (a service
 * manager, `kill`), not to its process group, still stops the agent and the simulated device; and a child
 * that dies takes the demo down with a non-zero exit rather than leaving half a demo running.
 *
 * Run from source (`node --import tsx cloud/cli.ts demo`), so it needs no build; the demo then runs
 * hajri-agent from source too. Each run has its own directory and free ports.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { freePort, waitFor } from '../../support/e2e-kit.js'

const REPO = fileURLToPath(new URL('../../../', import.meta.url))
const START_TIMEOUT_MS = 240_000
const STOP_TIMEOUT_MS = 120_000

interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}

const groups: ChildProcess[] = []
const dirs: string[] = []
afterAll(async () => {
  for (const child of groups) {
    try {
      process.kill(-(child.pid as number), 'SIGKILL')
    } catch {}
  }
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

async function freePorts(n: number): Promise<number[]> {
  const ports: number[] = []
  while (ports.length < n) {
    const port = await freePort()
    if (!ports.includes(port)) ports.push(port)
  }
  return ports
}

class Demo {
  readonly child: ChildProcess
  stdout = ''
  stderr = ''
  readonly exited: Promise<Exit>

  constructor(
    readonly dir: string,
    readonly ports: { cloud: number; mqtt: number; status: number },
  ) {
    this.child = spawn(process.execPath, ['--import', 'tsx', 'cloud/cli.ts', 'demo'], {
      cwd: REPO,
      env: {
        ...process.env,
        HAJRI_DATABASE_URL: `sqlite:${join(dir, 'hajri.db')}`,
        HAJRI_PORT: String(ports.cloud),
        HAJRI_DEMO_MQTT_PORT: String(ports.mqtt),
        HAJRI_DEMO_STATUS_PORT: String(ports.status),
      },
      // Its own group, so the test's cleanup reaches the children, and a signal to the demo alone
      // reaches nothing else.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    groups.push(this.child)
    this.child.stdout?.setEncoding('utf8').on('data', (t: string) => {
      this.stdout += t
    })
    this.child.stderr?.setEncoding('utf8').on('data', (t: string) => {
      this.stderr += t
    })
    this.exited = new Promise((resolve) =>
      this.child.once('close', (code, signal) => resolve({ code, signal })),
    )
  }

  static async create(): Promise<Demo> {
    const dir = await mkdtemp(join(tmpdir(), 'hajri-demo-command-'))
    dirs.push(dir)
    const [cloud, mqtt, status] = (await freePorts(3)) as [number, number, number]
    return new Demo(dir, { cloud, mqtt, status })
  }

  get output(): string {
    return `--- stdout ---\n${this.stdout}\n--- stderr ---\n${this.stderr}`
  }

  async running(): Promise<void> {
    let exit: Exit | undefined
    this.exited.then((e) => {
      exit = e
    })
    await waitFor(
      () => {
        if (exit) throw new Error(`the demo exited (${JSON.stringify(exit)}):\n${this.output}`)
        return /^Credentials are also in /m.test(this.stdout)
      },
      'the demo banner',
      { timeoutMs: START_TIMEOUT_MS, intervalMs: 200, describe: () => this.output },
    )
  }

  async exit(): Promise<Exit> {
    let timer: NodeJS.Timeout | undefined
    try {
      return await Promise.race([
        this.exited,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`the demo did not exit:\n${this.output}`)),
            STOP_TIMEOUT_MS,
          )
        }),
      ])
    } finally {
      clearTimeout(timer)
    }
  }

  /** The pids of this demo's agent and simulated device, found by their command lines. */
  async children(): Promise<{ agent: number[]; simulator: number[] }> {
    const agent: number[] = []
    const simulator: number[] = []
    for (const entry of await readdir('/proc')) {
      if (!/^\d+$/.test(entry)) continue
      let cmdline: string
      try {
        cmdline = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0').join(' ')
      } catch {
        continue
      }
      if (cmdline.includes(`run --config ${join(this.dir, 'demo-agent', 'agent.yaml')}`))
        agent.push(Number(entry))
      if (cmdline.includes(`simulate --mqtt mqtt://127.0.0.1:${this.ports.mqtt} `))
        simulator.push(Number(entry))
    }
    return { agent, simulator }
  }
}

async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/** Holds a port as another program would. */
async function occupy(port: number): Promise<net.Server> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  return server
}

async function expectAllGone(demo: Demo): Promise<void> {
  await waitFor(
    async () => {
      const { agent, simulator } = await demo.children()
      return agent.length === 0 && simulator.length === 0
    },
    'the agent and the simulated device to be gone',
    { timeoutMs: STOP_TIMEOUT_MS },
  )
  for (const port of Object.values(demo.ports)) expect(await listening(port), `port ${port}`).toBe(false)
}

describe('hajri-cloud demo', () => {
  it('names the variable to change when a port is taken, and starts nothing', {
    timeout: 300_000,
  }, async () => {
    const demo = await Demo.create()
    const blocker = await occupy(demo.ports.mqtt)
    try {
      expect(await demo.exit(), demo.output).toEqual({ code: 2, signal: null })
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()))
    }
    expect(demo.stderr).toContain(
      `HAJRI_DEMO_MQTT_PORT: 127.0.0.1:${demo.ports.mqtt} is already in use by another program; stop it, or set HAJRI_DEMO_MQTT_PORT to a free port`,
    )
    expect(demo.stdout).not.toContain('Hajri demo is running')

    const second = new Demo(demo.dir, { ...demo.ports, mqtt: (await freePorts(1))[0] as number })
    const cloudBlocker = await occupy(second.ports.cloud)
    try {
      expect(await second.exit(), second.output).toEqual({ code: 2, signal: null })
    } finally {
      await new Promise<void>((resolve) => cloudBlocker.close(() => resolve()))
    }
    expect(second.stderr).toContain(
      `HAJRI_PORT: 127.0.0.1:${second.ports.cloud} is already in use by another program; stop it, or set HAJRI_PORT to a free port`,
    )
    await expectAllGone(second)
  })

  it('stops the simulated device and the agent on SIGTERM to the demo alone, and exits 0', {
    timeout: 400_000,
  }, async () => {
    const demo = await Demo.create()
    await demo.running()
    const before = await demo.children()
    expect(before.agent).toHaveLength(1)
    expect(before.simulator).toHaveLength(1)
    demo.child.kill('SIGTERM')
    expect(await demo.exit(), demo.output).toEqual({ code: 0, signal: null })
    expect(demo.stdout).toMatch(/Stopping the demo \(SIGTERM\)[^\n]*\nHajri demo stopped\.\n$/)
    await expectAllGone(demo)
  })

  it('stops everything with a non-zero exit when the agent dies', { timeout: 400_000 }, async () => {
    const demo = await Demo.create()
    await demo.running()
    const { agent } = await demo.children()
    expect(agent).toHaveLength(1)
    process.kill(agent[0] as number, 'SIGKILL')
    expect(await demo.exit(), demo.output).toEqual({ code: 1, signal: null })
    expect(demo.stderr).toContain(
      'hajri-cloud demo: the agent stopped unexpectedly (signal SIGKILL); stopping the demo',
    )
    expect(demo.stdout).not.toContain('Hajri demo stopped.')
    await expectAllGone(demo)
  })
})
