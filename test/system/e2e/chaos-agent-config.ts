/**
 * The agent's configuration in the chaos tests: small batches that a slow link still
 * carries, and the smallest spool the schema allows, so that an outage can fill it.
 */
import { writeFile } from 'node:fs/promises'

export const MQTT_DEVICE = 'gate-1'
export const SERIAL_DEVICE = 'main-door'

/** The agent's configuration for the chaos run (YAML block style, secrets from the environment). */
export async function writeChaosAgentConfig(
  path: string,
  c: {
    cloudUrl: string
    clientId: string
    spoolDir: string
    statusPort: number
    mqttPort: number
    serialPath: string | undefined
  },
): Promise<void> {
  const q = (value: string) => JSON.stringify(value)
  const lines = [
    'site:',
    '  id: "chaos"',
    '  timezone: Asia/Kolkata',
    'cloud:',
    `  url: ${q(c.cloudUrl)}`,
    `  clientId: ${q(c.clientId)}`,
    `  clientSecret: \${HAJRI_CHAOS_CLIENT_SECRET}`,
    '  concurrency: 2',
    // Small batches: a request still gets through a link of a few KB/s within the timeout.
    '  batchSize: 50',
    '  timeoutSeconds: 15',
    'spool:',
    `  dir: ${q(c.spoolDir)}`,
    // The schema's least (cross-field-checks.ts): an outage with a burst of punches fills it.
    '  maxBytes: 1MiB',
    '  chunkPunches: 20',
    'status:',
    `  listen: 127.0.0.1:${c.statusPort}`,
    'log:',
    '  level: info',
    '  pretty: false',
    'mqtt:',
    '  embedded:',
    '    host: 127.0.0.1',
    `    port: ${c.mqttPort}`,
    '    users:',
    `      - username: ${q(MQTT_DEVICE)}`,
    `        password: \${HAJRI_CHAOS_MQTT_PASSWORD}`,
    'devices:',
    `  - id: ${q(MQTT_DEVICE)}`,
    '    mqtt:',
    `      topic: ${q(`punches/${MQTT_DEVICE}`)}`,
    '      format: json',
    `      username: ${q(MQTT_DEVICE)}`,
  ]
  if (c.serialPath) {
    lines.push(
      `  - id: ${q(SERIAL_DEVICE)}`,
      '    serial:',
      `      path: ${q(c.serialPath)}`,
      '      baudRate: 115200',
      '      framing:',
      '        type: line',
      '      format: zk-attlog',
    )
  }
  await writeFile(path, `${lines.join('\n')}\n`)
}
