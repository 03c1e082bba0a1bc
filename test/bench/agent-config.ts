import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { stringify } from 'yaml'

/** The device every agent benchmark configures: one MQTT device, no serial port. */
export const BENCH_DEVICE_ID = 'gate-1'
export const BENCH_TOPIC = `hajri/${BENCH_DEVICE_ID}/punches`

export interface AgentBenchConfig {
  /** Where the configuration file and its secret go. */
  dir: string
  spoolDir: string
  cloudUrl: string
  clientId: string
  clientSecret: string
  mqttPort: number
  statusPort: number
}

/**
 * Writes agent.yaml as an operator would: only what a site must say, every other setting left to
 * the schema's defaults (spool chunks of 500, 2 requests in flight, batches of 500, log level info),
 * so the benchmarks measure the agent as shipped. The secret is read from a file (clientSecretFile),
 * one of the two ways deploy/agent.example.yaml offers. Returns the configuration file's path.
 */
export function writeAgentConfig(config: AgentBenchConfig): Promise<string> {
  return writeBenchConfig(config, {
    mqtt: { embedded: { host: '127.0.0.1', port: config.mqttPort } },
    devices: [{ id: BENCH_DEVICE_ID, mqtt: { topic: BENCH_TOPIC, format: 'json' } }],
  })
}

/** agent.yaml with what every benchmark's agent has (site, cloud, spool, status) and `inputs`. */
async function writeBenchConfig(
  config: Omit<AgentBenchConfig, 'mqttPort'>,
  inputs: Record<string, unknown>,
): Promise<string> {
  const secretFile = join(config.dir, 'client-secret')
  await writeFile(secretFile, `${config.clientSecret}\n`, { mode: 0o600 })
  const document = {
    site: { id: 'bench-site' },
    cloud: { url: config.cloudUrl, clientId: config.clientId, clientSecretFile: secretFile },
    spool: { dir: config.spoolDir },
    status: { listen: `127.0.0.1:${config.statusPort}` },
    ...inputs,
  }
  const path = join(config.dir, 'agent.yaml')
  await writeFile(path, stringify(document))
  return path
}

export interface AdmsAgentBenchConfig extends Omit<AgentBenchConfig, 'mqttPort'> {
  admsPort: number
  /** One ADMS device per serial number, with ids adms-01, adms-02… */
  serialNumbers: readonly string[]
}

/** The id writeAdmsAgentConfig gives the i-th terminal (from 0). */
export function admsDeviceId(i: number): string {
  return `adms-${String(i + 1).padStart(2, '0')}`
}

/**
 * agent.yaml for push terminals, written as writeAgentConfig writes it (only what a site must say,
 * defaults for the rest): the ADMS listener on loopback and one device per terminal, each known by
 * its serial number alone (no allowFrom, no PIN rule, ZKTeco status codes), no MQTT at all.
 */
export function writeAdmsAgentConfig(config: AdmsAgentBenchConfig): Promise<string> {
  return writeBenchConfig(config, {
    adms: { listen: `127.0.0.1:${config.admsPort}` },
    devices: config.serialNumbers.map((serialNumber, i) => ({ id: admsDeviceId(i), adms: { serialNumber } })),
  })
}
