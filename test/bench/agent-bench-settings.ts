import { serviceNodeFlags } from './agent-service-flags.js'

/**
 * Settings of the agent benchmarks beyond the suite's own (bench-settings.ts), read from the
 * environment the same way, so a run can be shortened while working on them.
 */
export interface AgentBenchSettings {
  /** HAJRI_BENCH_DRAIN_PUNCHES: the backlog agent-drain spools and drains (1,000,000 by default). */
  drainPunches: number
  /**
   * HAJRI_BENCH_DRAIN_CHUNK: punches per chunk file of that backlog; by default spool.chunkPunches,
   * the fullest chunks there are. A spool filled one punch at a time (devices at human pace during an
   * outage: every group commit holds one punch) has chunks of 1.
   */
  drainChunk: number | undefined
  /**
   * HAJRI_BENCH_INGEST_BACKLOG: punches already in the spool, one per chunk file (as an outage at
   * human pace leaves them), before agent-ingest starts: ingest while the cloud is away. Default 0.
   */
  ingestBacklog: number
  /** HAJRI_BENCH_IDLE_SECONDS: how long agent-idle watches the idle agent. */
  idleSeconds: number
  /** HAJRI_BENCH_MQTT_CLIENTS: publishing connections of agent-ingest. */
  mqttClients: number
  /** HAJRI_BENCH_MQTT_WINDOW: QoS 1 publishes each connection keeps waiting for their PUBACK. */
  mqttWindow: number
  /** HAJRI_BENCH_ADMS_TERMINALS: simulated push terminals of agent-adms' many-terminal figures (50). */
  admsTerminals: number
  /** HAJRI_BENCH_ADMS_BATCH: ATTLOG records per POST of agent-adms' backlog figures (100). */
  admsBatch: number
  /** HAJRI_BENCH_ADMS_REALTIME=0 leaves out agent-adms' one-record-per-POST (realtime) figures. */
  admsRealtime: boolean
  /**
   * HAJRI_BENCH_AGENT_RUNTIME: `compiled` (default) runs agent/main.ts compiled by tsc first, as the
   * installed `hajri-agent` runs; `tsx` runs the sources through tsx (quicker to start a run, but
   * tsx adds tens of MB of RSS that no installed agent has).
   */
  runtime: 'tsx' | 'compiled'
  /**
   * HAJRI_BENCH_AGENT_NODE_FLAGS: node flags for the agent process only (not the cloud or the
   * bench). By default those of deploy/hajri-agent.service, so the figures are the service's;
   * `none` for none (V8 sizing its heap for the machine), or others to see what they change.
   */
  nodeFlags: string[]
}

function positiveInteger(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`${name} must be a positive whole number, got "${raw}"`)
  return value
}

function runtime(raw: string | undefined): 'tsx' | 'compiled' {
  if (raw === undefined || raw === '' || raw === 'compiled') return 'compiled'
  if (raw === 'tsx') return 'tsx'
  throw new Error(`HAJRI_BENCH_AGENT_RUNTIME must be tsx or compiled, got "${raw}"`)
}

function nodeFlags(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return serviceNodeFlags()
  if (raw.trim() === 'none') return []
  return raw.split(/\s+/).filter((flag) => flag !== '')
}

export function readAgentBenchSettings(env: NodeJS.ProcessEnv = process.env): AgentBenchSettings {
  return {
    drainPunches: positiveInteger(env, 'HAJRI_BENCH_DRAIN_PUNCHES', 1_000_000),
    drainChunk: env.HAJRI_BENCH_DRAIN_CHUNK ? positiveInteger(env, 'HAJRI_BENCH_DRAIN_CHUNK', 1) : undefined,
    ingestBacklog: env.HAJRI_BENCH_INGEST_BACKLOG ? positiveInteger(env, 'HAJRI_BENCH_INGEST_BACKLOG', 1) : 0,
    idleSeconds: positiveInteger(env, 'HAJRI_BENCH_IDLE_SECONDS', 20),
    mqttClients: positiveInteger(env, 'HAJRI_BENCH_MQTT_CLIENTS', 4),
    mqttWindow: positiveInteger(env, 'HAJRI_BENCH_MQTT_WINDOW', 250),
    admsTerminals: positiveInteger(env, 'HAJRI_BENCH_ADMS_TERMINALS', 50),
    admsBatch: positiveInteger(env, 'HAJRI_BENCH_ADMS_BATCH', 100),
    admsRealtime: env.HAJRI_BENCH_ADMS_REALTIME !== '0',
    runtime: runtime(env.HAJRI_BENCH_AGENT_RUNTIME),
    nodeFlags: nodeFlags(env.HAJRI_BENCH_AGENT_NODE_FLAGS),
  }
}
