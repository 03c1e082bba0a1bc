import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AgentStatus } from '../../agent/status/agent-status.js'
import { unusedPort } from '../support/unused-port.js'
import { type AdmsPhase, AdmsTerminals, TerminalLog } from './agent-adms-load.js'
import { readAgentBenchSettings } from './agent-bench-settings.js'
import { agentRuntime } from './agent-compile.js'
import { admsDeviceId, writeAdmsAgentConfig } from './agent-config.js'
import { requireProcfs } from './agent-proc-stats.js'
import { AgentProcess } from './agent-process.js'
import type { BenchContext, Benchmark } from './benchmark.js'
import { summarizeCpuProfile } from './cpu-profile-summary.js'
import { fsyncLatencyMs, fsyncNote } from './fsync-latency.js'
import { type BenchResult, type Figure, ratio } from './report.js'
import { ServerProcess } from './server-process.js'

/** Serial numbers shaped like ZKTeco's (four letters, nine digits), one per simulated terminal. */
function serialNumber(i: number): string {
  return `CJDE21300${String(i + 1).padStart(4, '0')}`
}

/** A load shape: so many terminals posting so many records a POST, in alternating rounds. */
interface Scenario {
  terminals: number
  batch: number
  warmupSeconds: number
  seconds: number
  rounds: number
  /** The goals apply (the backlog figures); realtime figures are shown without. */
  goals: boolean
}

/** One alternating round: the bare server's phase, then the agent's, under the same load. */
interface Round {
  bare: AdmsPhase
  agent: AdmsPhase
}

interface ScenarioRun {
  scenario: Scenario
  warmup: Round | undefined
  rounds: Round[]
}

const describe = (s: Scenario) =>
  `${s.terminals} terminal${s.terminals === 1 ? '' : 's'}, ${s.batch} record${s.batch === 1 ? '' : 's'} a POST`

const sum = (rounds: readonly Round[], f: (r: Round) => number) => rounds.reduce((acc, r) => acc + f(r), 0)

function rate(rounds: readonly Round[], side: 'bare' | 'agent'): number {
  return sum(rounds, (r) => r[side].records) / sum(rounds, (r) => r[side].seconds)
}

/** One figure of each phase, comma-separated: `f` of each round's phase on `side`. */
function perRound(
  rounds: readonly Round[],
  side: 'bare' | 'agent',
  f: (p: AdmsPhase) => number,
  digits: number,
) {
  return rounds.map((r) => f(r[side]).toFixed(digits)).join(', ')
}

function scenarioNote({ scenario, rounds }: ScenarioRun): string {
  const side = (name: 'bare' | 'agent') => {
    const each = (f: (p: AdmsPhase) => number, digits = 2) => perRound(rounds, name, f, digits)
    return (
      `${each((p) => p.perSecond, 0)} records/s per round (${each((p) => p.posts, 0)} POSTs answered in ` +
      `median ${each((p) => p.medianMs)} ms, p99 ${each((p) => p.p99Ms)} ms; its process used ` +
      `${each((p) => p.serverCpu)} cores, its main thread ran ${each((p) => p.serverMainRunning)} of the ` +
      `time and waited for a CPU ${each((p) => p.serverMainWaiting)}; the generator used ` +
      `${each((p) => p.generatorCpu)} of a core)`
    )
  }
  return `${describe(scenario)}: agent ${side('agent')}; bare server ${side('bare')}.`
}

function scenarioFigures(run: ScenarioRun): Figure[] {
  const { scenario, rounds } = run
  const agentRate = rate(rounds, 'agent')
  const bareRate = rate(rounds, 'bare')
  const what = `ATTLOG records/s, ${describe(scenario)}${scenario.batch === 1 ? ' (realtime)' : ''}`
  const value = { label: 'agent, durable in the spool', value: agentRate, unit: 'records/s' }
  const figures: Figure[] = [
    {
      name: `${what}, ratio to a bare HTTP server`,
      value,
      baseline: { label: 'bare node:http answering OK: n', value: bareRate, unit: 'records/s' },
      ratio: ratio(agentRate, bareRate),
      ...(scenario.goals ? { goal: { of: 'ratio', op: '>=', target: 0.3 } as const } : {}),
    },
  ]
  if (scenario.goals) figures.push({ name: what, value, goal: { of: 'value', op: '>=', target: 5_000 } })
  return figures
}

async function run(context: BenchContext): Promise<BenchResult> {
  requireProcfs()
  const { settings, log } = context
  const agentSettings = readAgentBenchSettings()
  const { admsTerminals: terminals, admsBatch: batch, admsRealtime } = agentSettings
  const startedAt = new Date()
  const profileName = 'agent-adms-agent'
  const profileDirectory = settings.cpuProfile
    ? join(context.resultsDirectory, 'profiles', profileName)
    : undefined
  // Profiles of an earlier run would be mistaken for this one's.
  if (profileDirectory) await rm(profileDirectory, { recursive: true, force: true })

  // The JIT is warm after the first scenario's warm-up: later ones only settle for a second.
  const settle = Math.min(1, settings.warmupSeconds)
  // Shown without goals: shorter rounds, so the whole benchmark stays near two minutes.
  const realtimeSeconds = Math.max(2, settings.seconds / 4)
  const scenarios: Scenario[] = [
    {
      terminals: 1,
      batch,
      warmupSeconds: settings.warmupSeconds,
      seconds: settings.seconds,
      rounds: settings.rounds,
      goals: true,
    },
    {
      terminals,
      batch,
      warmupSeconds: settle,
      seconds: settings.seconds,
      rounds: settings.rounds,
      goals: true,
    },
    ...(admsRealtime
      ? [
          {
            terminals: 1,
            batch: 1,
            warmupSeconds: settle,
            seconds: realtimeSeconds,
            rounds: settings.rounds,
            goals: false,
          },
          {
            terminals,
            batch: 1,
            warmupSeconds: settle,
            seconds: realtimeSeconds,
            rounds: settings.rounds,
            goals: false,
          },
        ]
      : []),
  ]

  const dir = await mkdtemp(join(tmpdir(), 'hajri-bench-agent-adms-'))
  const spoolDir = join(dir, 'spool')
  const serialNumbers = Array.from({ length: terminals }, (_, i) => serialNumber(i))
  const runs: ScenarioRun[] = []
  const problems: string[] = []
  const notes: string[] = []
  let status: AgentStatus | undefined
  let agentAcked = 0
  let fsyncBeforeMs = Number.NaN
  let fsyncAfterMs = Number.NaN
  let command = ''
  try {
    await mkdir(spoolDir)
    const { command: shown, ...runtimeOptions } = await agentRuntime(agentSettings, join(dir, 'build'))
    command = shown
    // A port nothing listens on: every request to the "cloud" is refused at once, so the forwarder
    // only backs off (with its floor and jitter) and never competes with ingest for CPU or disk.
    const [admsPort, statusPort, deadCloudPort] = [await unusedPort(), await unusedPort(), await unusedPort()]
    const configPath = await writeAdmsAgentConfig({
      dir,
      spoolDir,
      cloudUrl: `http://127.0.0.1:${deadCloudPort}`,
      clientId: 'hjc_bench_unreachable',
      clientSecret: 'unused-the-cloud-is-unreachable',
      admsPort,
      statusPort,
      serialNumbers,
    })
    fsyncBeforeMs = fsyncLatencyMs(spoolDir)
    const bare = await ServerProcess.start({ entry: 'adms-bare-server.ts' })
    try {
      const agent = await AgentProcess.start({
        configPath,
        ...runtimeOptions,
        statusPort,
        logFile: join(dir, 'agent.log'),
        profileDirectory,
        // The ADMS listener marks its terminals `waiting` once it listens.
        ready: (s) => s.devices.length === terminals && s.devices.every((d) => d.state !== 'unknown'),
      })
      try {
        const logs = () => serialNumbers.map((sn, i) => new TerminalLog(sn, i))
        const bareLoad = new AdmsTerminals(new URL(bare.url), logs(), bare.pid)
        const agentLoad = new AdmsTerminals(new URL(`http://127.0.0.1:${admsPort}`), logs(), agent.pid)
        // Terminals start with a handshake; it also proves the serial numbers are the configured ones.
        problems.push(...(await agentLoad.handshake()))
        for (const scenario of scenarios) {
          const { terminals: n, batch: b } = scenario
          log(`${describe(scenario)}: warming up for ${scenario.warmupSeconds} s per server`)
          const r: ScenarioRun = {
            scenario,
            warmup: {
              bare: await bareLoad.run(scenario.warmupSeconds, n, b),
              agent: await agentLoad.run(scenario.warmupSeconds, n, b),
            },
            rounds: [],
          }
          runs.push(r)
          for (let round = 0; round < scenario.rounds; round++) {
            const phases: Round = {
              bare: await bareLoad.run(scenario.seconds, n, b),
              agent: await agentLoad.run(scenario.seconds, n, b),
            }
            r.rounds.push(phases)
            log(
              `${describe(scenario)}, round ${round + 1}: agent ${phases.agent.perSecond.toFixed(0)} records/s ` +
                `(${phases.agent.serverCpu.toFixed(2)} cores; main thread running ` +
                `${phases.agent.serverMainRunning.toFixed(2)}, waiting for a CPU ` +
                `${phases.agent.serverMainWaiting.toFixed(2)}), bare server ${phases.bare.perSecond.toFixed(0)} ` +
                `(${phases.bare.serverCpu.toFixed(2)} cores); generator ${phases.agent.generatorCpu.toFixed(2)} / ` +
                `${phases.bare.generatorCpu.toFixed(2)} of a core`,
            )
          }
        }
        agentAcked = agentLoad.totalRecords
        // Every `OK: n` the agent answered promised n records on disk: the spool must hold them all.
        status = await agent.status()
        for (const [name, load] of [
          ['bare server', bareLoad],
          ['agent', agentLoad],
        ] as const) {
          if (load.errors > 0)
            problems.push(`${name}: ${load.errors} uploads not answered OK: n; first: ${load.firstError}`)
        }
        const warnings = agent.warnings()
        const exit = await agent.stop()
        if (exit.code !== 0)
          problems.push(
            `the agent exited with code ${exit.code} (signal ${exit.signal}) on SIGTERM; log:\n${agent.logTail()}`,
          )
        notes.push(
          `agent log: ${warnings.count} lines at warn or above (the unreachable cloud's "forwarding failed" ` +
            `is expected)${warnings.first ? `; first: ${warnings.first}` : ''}.`,
        )
      } finally {
        await agent.stop()
      }
    } finally {
      await bare.stop()
    }
    fsyncAfterMs = fsyncLatencyMs(spoolDir)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }

  if (status) {
    if (status.spool.punches !== agentAcked)
      problems.push(
        `the agent answered OK for ${agentAcked} records but its spool holds ${status.spool.punches}: ` +
          'acknowledgements did not match durable punches',
      )
    if (status.deadLetters.count > 0)
      problems.push(`${status.deadLetters.count} records went to dead letters instead of the spool`)
    if (status.spool.quarantinedChunks > 0)
      problems.push(`${status.spool.quarantinedChunks} spool chunks quarantined`)
    if (status.forwarding.forwarded > 0)
      problems.push(
        `${status.forwarding.forwarded} punches were forwarded: the cloud was meant to be unreachable`,
      )
    if (status.unknownDevices.length > 0)
      problems.push(
        `the agent refused terminals as unknown: ${status.unknownDevices.map((d) => d.serialNumber).join(', ')}`,
      )
    const devices = new Map(status.devices.map((d) => [d.id, d]))
    const silent = serialNumbers.filter((_, i) => !(devices.get(admsDeviceId(i))?.punches ?? 0))
    if (silent.length > 0)
      problems.push(`terminals with no punch in the spool after the load: ${silent.join(', ')}`)
    const received = status.devices.reduce((acc, d) => acc + (d.details?.recordsReceived ?? 0), 0)
    if (received !== agentAcked)
      problems.push(`the terminals' status counts ${received} records received, the generator ${agentAcked}`)
  }

  const allRounds = runs.flatMap((r) => r.rounds)
  const generatorCpu = (side: 'bare' | 'agent') =>
    Math.max(...allRounds.map((r) => r[side].generatorCpu)).toFixed(2)
  const mainWaiting = Math.max(...allRounds.map((r) => r.agent.serverMainWaiting)).toFixed(2)
  notes.push(
    fsyncNote(fsyncBeforeMs, fsyncAfterMs).replace('the database directory', 'the spool directory'),
    `agent: answered OK for ${agentAcked} records in all (warm-ups and the tails after each phase ` +
      `included); its spool held ${status?.spool.punches ?? '?'} punches in ${status?.spool.chunks ?? '?'} ` +
      `chunks (${((status?.spool.bytes ?? 0) / 2 ** 20).toFixed(1)} MiB) afterwards.`,
    ...runs.map(scenarioNote),
    `The load generator (this process) used at most ${generatorCpu('bare')} of a core during a bare ` +
      `server round and ${generatorCpu('agent')} during an agent round: near 1.0, the baseline is the ` +
      "generator's limit and the ratio flatters the agent. The agent's main thread (its event loop, " +
      `where every record is parsed and made a punch) waited for a CPU up to ${mainWaiting} of the ` +
      "time in its rounds: CPU it wanted while the machine's cores were busy with the generator or " +
      "anything else running (the load average is in the summary's header); a large share means the " +
      "figures are the machine's, not the agent's.",
  )

  let profileSummary: string | undefined
  if (profileDirectory) profileSummary = await summarizeCpuProfile(profileDirectory, profileName)

  const timing = scenarios
    .map((s) => `${describe(s)}: ${s.warmupSeconds} s warm-up, then ${s.rounds} rounds of ${s.seconds} s`)
    .join('; ')
  return {
    name: 'agent-adms',
    title: 'Agent: ADMS push terminals uploading attendance (durable)',
    method:
      `hajri-agent (${command}, a child process; default settings: spool chunks of 500, log level info ` +
      `to a file) with its ADMS listener on loopback and ${terminals} push devices (one per serial number, ` +
      'no PIN rule, ZKTeco status codes), its spool in a temporary directory, and a cloud URL on which ' +
      'nothing listens, so forwarding only backs off and does not compete. Load, from the bench process: ' +
      'simulated terminals, each a loop posting `POST /iclock/cdata?SN=..&table=ATTLOG&Stamp=..` ' +
      '(`Content-Type: text/plain`, `User-Agent: iClock Proxy/1.09`, `Connection: close`, a new ' +
      'connection per request and no pipelining, as firmware does), waiting for the answer, checking it ' +
      'is 200 `OK: <n>` for the n records sent, then posting the next. Every record is a distinct ' +
      'employee and second (PIN, wall time in Asia/Kolkata hours in the past, status 0 or 1, verify 1, ' +
      'workcode 0, two reserved fields), so each is a punch the agent spools. ' +
      `Backlog figures: ${batch} records a POST, the batch \`hajri-agent simulate --adms\` models: a terminal ` +
      'catching up on a backlog (after an outage of the agent or the LAN, or a terminal newly pointed at ' +
      'it) posts its log as a run of such batches back to back, which is when throughput matters; at ' +
      'about 40 bytes a record a batch is a 4 KB body. Realtime figures (one record a POST, how a ' +
      'terminal sends each punch as it is made) are shown too, without goals: terminals then send at ' +
      'human pace. Records per second are counted from the answers. Baseline: a bare node:http server ' +
      'in a child process that reads the body, counts its non-blank lines and answers `OK: <n>` ' +
      'without storing anything, under the same load in alternating rounds (' +
      `${timing}; per server). Afterwards GET /status must show as many punches in the spool as the agent ` +
      'acknowledged, none in dead letters, and every terminal served.',
    startedAt: startedAt.toISOString(),
    elapsedSeconds: (Date.now() - startedAt.getTime()) / 1000,
    figures: runs.flatMap(scenarioFigures),
    problems,
    notes,
    appendix:
      profileSummary &&
      `CPU profile of the agent during the whole load (this run's timings are perturbed by the profiler):\n\n${profileSummary}`,
    details: {
      fsyncBeforeMs,
      fsyncAfterMs,
      terminals,
      batch,
      runs,
      agentAcknowledged: agentAcked,
      spool: status?.spool,
      deadLetters: status?.deadLetters,
    },
  }
}

export const agentAdmsBench: Benchmark = { name: 'agent-adms', run }
