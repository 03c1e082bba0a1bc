/**
 * The agent's configuration for a test whose one device is a ZK terminal read over port 4370
 * (docs/development/zk-protocol.md): the site, cloud, spool and status sections as
 * agent-process.ts writes them for every durability test, and a `zk` device entry after them
 * (agent/config/schema.ts, ZkDeviceSection). Written in YAML block style for the same reason as
 * there: a flow mapping would not survive `${...}` text.
 */
import { appendFile, readFile } from 'node:fs/promises'
import { type AgentYaml, writeAgentConfig } from './agent-process.js'

export interface ZkDeviceYaml {
  id: string
  /** The device's own zone; the site's (Asia/Kolkata, agent-process.ts) when left out. */
  timezone?: string
  zk: {
    host: string
    port: number
    transport: 'tcp' | 'udp' | 'auto'
    commKey: number
    /** 10s to 24h (cross-field-checks.ts): the terminal is paused while its log is read. */
    pollEvery: string
    realtime: boolean
    setTime: boolean
    timeoutSeconds: number
  }
}

export async function writeZkAgentConfig(
  path: string,
  base: Omit<AgentYaml, 'mqtt' | 'serial' | 'adms'>,
  device: ZkDeviceYaml,
): Promise<void> {
  await writeAgentConfig(path, base)
  // Without mqtt, serial or adms devices, writeAgentConfig ends on an empty `devices:`; the entry
  // goes below it. Anything else means that file changed its layout, and this one must follow.
  const written = await readFile(path, 'utf8')
  if (!written.endsWith('\ndevices:\n')) {
    throw new Error(`writeAgentConfig no longer ends with "devices:"; cannot add the zk device:\n${written}`)
  }
  const q = (value: string) => JSON.stringify(value) // a JSON string is a YAML double-quoted scalar
  const { zk } = device
  const lines = [
    `  - id: ${q(device.id)}`,
    ...(device.timezone === undefined ? [] : [`    timezone: ${q(device.timezone)}`]),
    '    zk:',
    `      host: ${q(zk.host)}`,
    `      port: ${zk.port}`,
    `      transport: ${zk.transport}`,
    `      commKey: ${zk.commKey}`,
    `      pollEvery: ${q(zk.pollEvery)}`,
    `      realtime: ${zk.realtime}`,
    `      setTime: ${zk.setTime}`,
    `      timeoutSeconds: ${zk.timeoutSeconds}`,
  ]
  await appendFile(path, `${lines.join('\n')}\n`)
}
