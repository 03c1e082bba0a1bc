import type { DeviceConfig } from '../config/schema.js'
import { ZkClient } from '../inputs/zk/zk-client.js'
import { formatZkWallTime } from '../inputs/zk/zk-time.js'
import { type CheckOutcome, describeError, fail, pass } from './check-result.js'
import type { RunningAgent } from './running-agent.js'
import { stepSignal, untilAborted } from './step-timeout.js'

type ZkSettings = NonNullable<DeviceConfig['zk']>

const ADVICE: Record<string, string> = {
  zk_auth_refused:
    "the terminal refuses the comm key: set zk.commKey to the terminal's (Menu > Comm. > Connection > COMM Key)",
  zk_session_refused:
    'the terminal refuses a session: another program (the vendor software, another agent) may hold it; close that',
}
const REACH =
  'check zk.host and zk.port (Menu > Comm. > Ethernet on the terminal), that it is powered and on this network (ping it), and that nothing blocks port 4370'

/**
 * The terminal answers on port 4370 (agent/inputs/zk/zk-client.ts, the agent's own client): a
 * session is opened, its device information and clock read (reads only: nothing on it changes),
 * and the session closed. A terminal takes one session at a time, so while the agent runs its
 * own view of the terminal is reported instead of taking the terminal from it.
 */
export async function checkZkTerminal(
  deviceId: string,
  zk: ZkSettings,
  agent: Promise<RunningAgent>,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<CheckOutcome> {
  const running = await agent
  if (running.running) {
    const device = running.status.devices.find((d) => d.id === deviceId)
    const pull = device?.details?.pull
    if (device?.state === 'connected') {
      return pass(`the running agent reads it; log read ${pull?.lastReadAt ?? 'not yet'}`)
    }
    const last = pull?.lastError ? `: ${pull.lastError.code}: ${pull.lastError.message}` : ''
    return fail(
      `the running agent reports it ${device?.state ?? 'unknown'}${last}`,
      (pull?.lastError && ADVICE[pull.lastError.code]) ?? REACH,
    )
  }
  const step = stepSignal(signal, timeoutMs)
  let client: ZkClient | undefined
  try {
    const connecting = ZkClient.connect({
      host: zk.host,
      port: zk.port,
      transport: zk.transport,
      commKey: zk.commKey,
      requestTimeoutMs: timeoutMs,
      connectTimeoutMs: timeoutMs,
    })
    // Closed even when it connects after the check gave up on it.
    connecting.then(
      (c) => (step.aborted ? c.close() : undefined),
      () => {},
    )
    client = await untilAborted(connecting, step, `connecting to ${zk.host}:${zk.port}`)
    const info = await untilAborted(client.readDeviceInfo(), step, 'reading the device information')
    const time = await untilAborted(client.getTime(), step, 'reading the clock')
    const who = [
      info.serialNumber && `SN ${info.serialNumber}`,
      info.firmware && `firmware ${info.firmware}`,
      `over ${client.transportKind ?? zk.transport}`,
    ].filter(Boolean)
    return pass(
      `${zk.host}:${zk.port} answers (${who.join(', ')}); its clock reads ${formatZkWallTime(time)}`,
    )
  } catch (err) {
    const code = (err as { code?: string }).code ?? ''
    return fail(
      `${zk.host}:${zk.port} does not answer as a ZK terminal (${describeError(err)})`,
      ADVICE[code] ?? REACH,
    )
  } finally {
    await client?.close()
  }
}
