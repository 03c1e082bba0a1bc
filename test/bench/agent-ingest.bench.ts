import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AgentStatus } from '../../agent/status/agent-status.js'
import { unusedPort } from '../support/unused-port.js'
import { readAgentBenchSettings } from './agent-bench-settings.js'
import { agentRuntime } from './agent-compile.js'
import { BENCH_TOPIC, writeAgentConfig } from './agent-config.js'
import { type MqttPhase, MqttPublishers } from './agent-mqtt-load.js'
import { requireProcfs } from './agent-proc-stats.js'
import { AgentProcess } from './agent-process.js'
import { benchEmployeeCodes, drainPunch, drainStart, mqttPunchPayloads } from './agent-punch-data.js'
import { writeSpoolBacklog } from './agent-spool-writer.js'
import type { BenchContext, Benchmark } from './benchmark.js'
import { summarizeCpuProfile } from './cpu-profile-summary.js'
import { fsyncLatencyMs, fsyncNote } from './fsync-latency.js'
import { type BenchResult, ratio } from './report.js'
import { ServerProcess } from './server-process.js'

const EMPLOYEES = 500

/** One alternating round: the raw broker's phase, then the agent's, under the same load. */
interface Round {
  raw: MqttPhase
  agent: MqttPhase
}

async function run(context: BenchContext): Promise<BenchResult> {
  requireProcfs()
  const { settings, log } = context
  const agentSettings = readAgentBenchSettings()
  const { mqttClients, mqttWindow, ingestBacklog } = agentSettings
  const startedAt = new Date()
  const profileName = 'agent-ingest-agent'
  const profileDirectory = settings.cpuProfile
    ? join(context.resultsDirectory, 'profiles', profileName)
    : undefined
  // Profiles of an earlier run would be mistaken for this one's.
  if (profileDirectory) await rm(profileDirectory, { recursive: true, force: true })

  const dir = await mkdtemp(join(tmpdir(), 'hajri-bench-agent-ingest-'))
  const spoolDir = join(dir, 'spool')
  const rounds: Round[] = []
  const problems: string[] = []
  const notes: string[] = []
  let warmup: { raw: MqttPhase; agent: MqttPhase } | undefined
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
    const [mqttPort, statusPort, deadCloudPort] = [await unusedPort(), await unusedPort(), await unusedPort()]
    const configPath = await writeAgentConfig({
      dir,
      spoolDir,
      cloudUrl: `http://127.0.0.1:${deadCloudPort}`,
      clientId: 'hjc_bench_unreachable',
      clientSecret: 'unused-the-cloud-is-unreachable',
      mqttPort,
      statusPort,
    })
    fsyncBeforeMs = fsyncLatencyMs(spoolDir)
    if (ingestBacklog > 0) {
      const start = drainStart(ingestBacklog)
      const codes = benchEmployeeCodes(EMPLOYEES)
      await writeSpoolBacklog(spoolDir, ingestBacklog, 1, (i) => drainPunch(i, codes, start))
    }
    const raw = await ServerProcess.start({ entry: 'agent-raw-aedes.ts' })
    try {
      const agent = await AgentProcess.start({
        configPath,
        ...runtimeOptions,
        statusPort,
        logFile: join(dir, 'agent.log'),
        profileDirectory,
        // The embedded broker is the last part to start; it marks its device `waiting` once listening.
        ready: (s) => s.devices.every((d) => d.state !== 'unknown'),
      })
      try {
        const codes = benchEmployeeCodes(EMPLOYEES)
        const publishers = (url: string) =>
          MqttPublishers.connect({
            url,
            topic: BENCH_TOPIC,
            clients: mqttClients,
            window: mqttWindow,
            nextPayload: mqttPunchPayloads(codes),
          })
        const rawLoad = await publishers(raw.url)
        const agentLoad = await publishers(`mqtt://127.0.0.1:${mqttPort}`)
        try {
          log(`warming up for ${settings.warmupSeconds} s per broker`)
          warmup = {
            raw: await rawLoad.run(settings.warmupSeconds),
            agent: await agentLoad.run(settings.warmupSeconds),
          }
          for (let round = 0; round < settings.rounds; round++) {
            const r: Round = {
              raw: await rawLoad.run(settings.seconds),
              agent: await agentLoad.run(settings.seconds),
            }
            rounds.push(r)
            log(
              `round ${round + 1}: agent ${r.agent.perSecond.toFixed(0)} punches/s, ` +
                `raw aedes ${r.raw.perSecond.toFixed(0)} messages/s`,
            )
          }
          agentAcked = agentLoad.totalAcked
          // Every PUBACK the agent sent promised a punch on disk: the spool must hold them all.
          status = await agent.status()
        } finally {
          await rawLoad.close()
          await agentLoad.close()
          for (const [name, load] of [
            ['raw aedes', rawLoad],
            ['agent', agentLoad],
          ] as const) {
            if (load.errors > 0)
              problems.push(`${name}: ${load.errors} publish errors; first: ${load.firstError}`)
            if (load.lostConnections > 0)
              problems.push(
                `${name}: ${load.lostConnections} connections closed by the broker during the load`,
              )
          }
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
      await raw.stop()
    }
    fsyncAfterMs = fsyncLatencyMs(spoolDir)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }

  if (status) {
    if (status.spool.punches !== agentAcked + ingestBacklog)
      problems.push(
        `the agent acknowledged ${agentAcked} punches (on a backlog of ${ingestBacklog}) but its spool ` +
          `holds ${status.spool.punches}: PUBACKs did not match durable punches`,
      )
    if (status.deadLetters.count > 0)
      problems.push(`${status.deadLetters.count} punches went to dead letters instead of the spool`)
    if (status.spool.quarantinedChunks > 0)
      problems.push(`${status.spool.quarantinedChunks} spool chunks quarantined`)
    if (status.forwarding.forwarded > 0)
      problems.push(
        `${status.forwarding.forwarded} punches were forwarded: the cloud was meant to be unreachable`,
      )
  }

  const sum = (f: (r: Round) => number) => rounds.reduce((acc, r) => acc + f(r), 0)
  const agentRate = sum((r) => r.agent.acked) / sum((r) => r.agent.seconds)
  const rawRate = sum((r) => r.raw.acked) / sum((r) => r.raw.seconds)
  const generatorCpu = (phase: 'raw' | 'agent') =>
    Math.max(...rounds.map((r) => r[phase].generatorCpu)).toFixed(2)
  notes.push(
    fsyncNote(fsyncBeforeMs, fsyncAfterMs).replace('the database directory', 'the spool directory'),
    `agent: ${sum((r) => r.agent.acked)} PUBACKs in ${sum((r) => r.agent.seconds).toFixed(1)} s measured; ` +
      `${agentAcked} acknowledged in all (warm-up and the in-flight tails included); its spool held ` +
      `${status?.spool.punches ?? '?'} punches in ${status?.spool.chunks ?? '?'} chunks ` +
      `(${((status?.spool.bytes ?? 0) / 2 ** 20).toFixed(1)} MiB) afterwards.`,
    `agent per round: ${rounds.map((r) => r.agent.perSecond.toFixed(0)).join(', ')} punches/s (its spool ` +
      `grows from round to round); raw aedes per round: ${rounds.map((r) => r.raw.perSecond.toFixed(0)).join(', ')}.`,
    `raw aedes: ${sum((r) => r.raw.acked)} PUBACKs in ${sum((r) => r.raw.seconds).toFixed(1)} s measured.`,
    `The load generator (this process) used at most ${generatorCpu('raw')} of a core during a raw aedes ` +
      `round and ${generatorCpu('agent')} during an agent round: near 1.0, the baseline is the generator's ` +
      'limit and the ratio flatters the agent.',
  )

  let profileSummary: string | undefined
  if (profileDirectory) profileSummary = await summarizeCpuProfile(profileDirectory, profileName)

  return {
    name: 'agent-ingest',
    title: 'Agent: durable QoS 1 ingest (embedded broker)',
    method:
      `hajri-agent (${command}, a child process; default ` +
      'settings: spool chunks of 500, log level info to a file) with its embedded broker on loopback, one ' +
      `MQTT device (topic ${BENCH_TOPIC}, JSON payloads), its spool in a temporary directory, and a cloud URL ` +
      'on which nothing listens, so forwarding only backs off and does not compete. Load, from the bench ' +
      `process: mqtt.js (MQTT 3.1.1) on ${mqttClients} connections, each keeping ${mqttWindow} QoS 1 ` +
      'publishes of distinct valid JSON punches waiting for their PUBACK, a new one sent as ' +
      'each PUBACK arrives; PUBACKs per second are counted. Baseline: a bare aedes broker (`new Aedes()` on a ' +
      'net server, no hooks, in-memory persistence) in a child process, same load, in alternating rounds ' +
      `(${settings.warmupSeconds} s warm-up each, then ${settings.rounds} rounds of ${settings.seconds} s per ` +
      'broker). Afterwards GET /status must show as many punches in the spool as the agent acknowledged' +
      (ingestBacklog > 0
        ? `, on top of a backlog of ${ingestBacklog} punches in chunk files of one written before it started.`
        : '.'),
    startedAt: startedAt.toISOString(),
    elapsedSeconds: (Date.now() - startedAt.getTime()) / 1000,
    figures: [
      {
        name: 'QoS 1 punches/s, ratio to raw aedes',
        value: { label: 'agent, durable in the spool', value: agentRate, unit: 'punches/s' },
        baseline: { label: 'raw aedes', value: rawRate, unit: 'messages/s' },
        ratio: ratio(agentRate, rawRate),
        goal: { of: 'ratio', op: '>=', target: 0.3 },
      },
      {
        name: 'QoS 1 punches/s',
        value: { label: 'agent, durable in the spool', value: agentRate, unit: 'punches/s' },
        goal: { of: 'value', op: '>=', target: 5_000 },
      },
    ],
    problems,
    notes,
    appendix:
      profileSummary &&
      `CPU profile of the agent during ingest (this run's timings are perturbed by the profiler):\n\n${profileSummary}`,
    details: {
      fsyncBeforeMs,
      fsyncAfterMs,
      mqttClients,
      mqttWindow,
      ingestBacklog,
      warmup,
      rounds,
      agentAcknowledged: agentAcked,
      spool: status?.spool,
      deadLetters: status?.deadLetters,
    },
  }
}

export const agentIngestBench: Benchmark = { name: 'agent-ingest', run }
