import type { DeviceConfig } from '../config/schema.js'
import { type CheckOutcome, fail, pass, skip, warn } from './check-result.js'
import type { RunningAgent } from './running-agent.js'

type AdmsSettings = NonNullable<DeviceConfig['adms']>

/** A terminal asks for commands every adms.pollSeconds; silence this many polls long is a problem. */
const SILENT_POLLS = 6
const MIN_SILENCE_SECONDS = 60

/**
 * An ADMS (push) terminal has spoken to the agent lately. Only the running agent knows (its
 * status listener, agent/status/): a terminal pushes to it and to nothing else.
 */
export async function checkAdmsDevice(
  deviceId: string,
  adms: AdmsSettings,
  pollSeconds: number,
  agent: Promise<RunningAgent>,
  now: () => number = Date.now,
): Promise<CheckOutcome> {
  const running = await agent
  if (!running.running)
    return skip(`the agent is not running (${running.reason}): only it hears the terminal`)
  const device = running.status.devices.find((d) => d.id === deviceId)
  const lastContactAt = device?.details?.lastContactAt ?? null
  const limitSeconds = Math.max(MIN_SILENCE_SECONDS, SILENT_POLLS * pollSeconds)
  const advice =
    "on the terminal, check Menu > Comm. > Cloud Server (ADMS): the agent's address and adms.listen port, and that the terminal is online; hajri-agent status lists terminals refused for an unknown serial number"
  if (lastContactAt === null) {
    const upSeconds = running.status.agent.uptimeSeconds
    if (upSeconds < limitSeconds) {
      return warn(`SN ${adms.serialNumber} has not spoken yet (the agent started ${upSeconds} s ago)`, advice)
    }
    return fail(`SN ${adms.serialNumber} has not spoken since the agent started ${upSeconds} s ago`, advice)
  }
  const silentSeconds = Math.max(0, Math.round((now() - Date.parse(lastContactAt)) / 1000))
  const upload = device?.details?.lastUploadAt ? `, last upload ${device.details.lastUploadAt}` : ''
  if (silentSeconds > limitSeconds) {
    return fail(`SN ${adms.serialNumber} last spoke ${silentSeconds} s ago${upload}`, advice)
  }
  return pass(`SN ${adms.serialNumber} last spoke ${silentSeconds} s ago${upload}`)
}
