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
export async function writeAgentConfig(config: AgentBenchConfig): Promise<string> {
  const secretFile = join(config.dir, 'client-secret')
  await writeFile(secretFile, `${config.clientSecret}\n`, { mode: 0o600 })
  const document = {
    site: { id: 'bench-site' },
    cloud: { url: config.cloudUrl, clientId: config.clientId, clientSecretFile: secretFile },
    spool: { dir: config.spoolDir },
    status: { listen: `127.0.0.1:${config.statusPort}` },
    mqtt: { embedded: { host: '127.0.0.1', port: config.mqttPort } },
    devices: [{ id: BENCH_DEVICE_ID, mqtt: { topic: BENCH_TOPIC, format: 'json' } }],
  }
  const path = join(config.dir, 'agent.yaml')
  await writeFile(path, stringify(document))
  return path
}
