import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AgentStatus } from '../../agent/status/agent-status.js'
import { spawnTracked, stopChild } from '../support/child-program.js'
import { unusedPort } from '../support/unused-port.js'
import { readAgentBenchSettings } from './agent-bench-settings.js'
import { createAgentCloudDatabase } from './agent-cloud-database.js'
import { agentRuntime } from './agent-compile.js'
import { writeAgentConfig } from './agent-config.js'
import { cpuSeconds, memoryMB, requireProcfs } from './agent-proc-stats.js'
import { AgentProcess } from './agent-process.js'
import type { BenchContext, Benchmark } from './benchmark.js'
import { type BenchResult, ratio } from './report.js'
import { ServerProcess } from './server-process.js'

// Startup is not idling: besides loading and compiling, V8 runs its memory reducer's GCs until
// some 30 s after startup's allocations stop (on the bench machine: 1.2 % of a core in the agent's
// first 10 s, a heap shrink near 28 s, about 0.3 % after). Both processes get this long first.
const SETTLE_MS = 35_000
const IDLE_NODE = 'setInterval(() => {}, 1000)'

interface Usage {
  /** CPU seconds over the window. */
  cpu: number
  /** cpu / wall seconds: the share of one core. */
  share: number
}

async function run(context: BenchContext): Promise<BenchResult> {
  requireProcfs()
  const { log } = context
  const agentSettings = readAgentBenchSettings()
  const { idleSeconds: seconds, runtime } = agentSettings
  const startedAt = new Date()
  const dir = await mkdtemp(join(tmpdir(), 'hajri-bench-agent-idle-'))
  const problems: string[] = []
  let agentUsage: Usage | undefined
  let baselineUsage: Usage | undefined
  let wall = Number.NaN
  let rssMB = Number.NaN
  let status: AgentStatus | undefined
  let warnings: { count: number; first: string | undefined } = { count: 0, first: undefined }
  let command = ''
  try {
    const { command: shown, ...runtimeOptions } = await agentRuntime(agentSettings, join(dir, 'build'))
    command = shown
    const spoolDir = join(dir, 'spool')
    await mkdir(spoolDir)
    const database = await createAgentCloudDatabase(10)
    try {
      const cloud = await ServerProcess.start({ entry: 'cloud-server.ts', args: [database.url] })
      try {
        const [mqttPort, statusPort] = [await unusedPort(), await unusedPort()]
        const configPath = await writeAgentConfig({
          dir,
          spoolDir,
          cloudUrl: cloud.url,
          clientId: database.clientId,
          clientSecret: database.clientSecret,
          mqttPort,
          statusPort,
        })
        const agent = await AgentProcess.start({
          configPath,
          ...runtimeOptions,
          statusPort,
          logFile: join(dir, 'agent.log'),
          ready: (s) => s.devices.every((d) => d.state !== 'unknown'),
        })
        const idleNode = spawnTracked(process.execPath, ['-e', IDLE_NODE], { stdio: 'ignore' })
        try {
          await new Promise((resolve) => setTimeout(resolve, SETTLE_MS))
          const baselinePid = idleNode.pid as number
          log(`watching the idle agent for ${seconds} s`)
          // Only /proc is read meanwhile: a status request would be work for the agent.
          const before = {
            agent: cpuSeconds(agent.pid),
            baseline: cpuSeconds(baselinePid),
            at: performance.now(),
          }
          await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
          const after = {
            agent: cpuSeconds(agent.pid),
            baseline: cpuSeconds(baselinePid),
            at: performance.now(),
          }
          wall = (after.at - before.at) / 1000
          agentUsage = { cpu: after.agent - before.agent, share: (after.agent - before.agent) / wall }
          baselineUsage = {
            cpu: after.baseline - before.baseline,
            share: (after.baseline - before.baseline) / wall,
          }
          rssMB = memoryMB(agent.pid).rss
          status = await agent.status()
          warnings = agent.warnings()
        } finally {
          await stopChild(idleNode, 'SIGTERM', 5_000)
          const exit = await agent.stop()
          if (exit.code !== 0)
            problems.push(`the agent exited with code ${exit.code} (signal ${exit.signal}) on SIGTERM`)
        }
      } finally {
        await cloud.stop()
      }
    } finally {
      await database.remove()
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }

  if (status && (status.spool.punches > 0 || status.forwarding.forwarded > 0 || status.deadLetters.count > 0))
    problems.push('the agent was not idle: it spooled, forwarded or dead-lettered punches')
  if (status?.forwarding.lastError)
    problems.push(`the agent reports a forwarding error: ${status.forwarding.lastError.message}`)
  const percent = (u: Usage | undefined) => (u ? u.share * 100 : Number.NaN)
  const agentPercent = percent(agentUsage)
  const baselinePercent = percent(baselineUsage)

  return {
    name: 'agent-idle',
    title: 'Agent: idle CPU',
    method:
      `hajri-agent (${command}, default settings, log level info) with its embedded ` +
      'broker, one MQTT device and no serial port, an empty spool, and a reachable cloud (cloud-server.ts, ' +
      `SQLite) that it has nothing to send; nothing connects or publishes. After ${SETTLE_MS / 1000} s to settle, ` +
      `its CPU time (utime + stime of all threads, /proc/<pid>/stat) over ${seconds} s, as a share of one core. ` +
      `Baseline over the same ${seconds} s, side by side: \`node -e "${IDLE_NODE}"\`.`,
    startedAt: startedAt.toISOString(),
    elapsedSeconds: (Date.now() - startedAt.getTime()) / 1000,
    figures: [
      {
        name: 'idle CPU',
        value: { label: 'agent', value: agentPercent, unit: '% of a core' },
        baseline: { label: 'idle node', value: baselinePercent, unit: '% of a core' },
        // An idle node often uses no clock tick at all in the window: no ratio to a zero.
        ...(baselinePercent > 0 ? { ratio: ratio(agentPercent, baselinePercent) } : {}),
      },
      {
        name: 'idle CPU above idle node',
        value: { label: 'agent minus idle node', value: agentPercent - baselinePercent, unit: '% of a core' },
      },
    ],
    problems,
    notes: [
      `over ${wall.toFixed(1)} s: agent ${agentUsage?.cpu.toFixed(2) ?? '?'} CPU s, idle node ` +
        `${baselineUsage?.cpu.toFixed(2) ?? '?'} CPU s (clock ticks of 10 ms).`,
      `agent RSS at the end: ${rssMB.toFixed(0)} MB${runtime === 'tsx' ? " (tsx's module hooks included)" : ''}; alarms: ` +
        `${JSON.stringify(status?.alarms ?? [])}; ${warnings.count} log lines at warn or above` +
        `${warnings.first ? `; first: ${warnings.first}` : ''}.`,
    ],
    details: { seconds: wall, agent: agentUsage, baseline: baselineUsage, rssMB, alarms: status?.alarms },
  }
}

export const agentIdleBench: Benchmark = { name: 'agent-idle', run }
