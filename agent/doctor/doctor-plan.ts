import type { AgentConfig } from '../config/schema.js'
import { checkAdmsDevice } from './adms-device-check.js'
import { type CheckOutcome, type CheckResult, skip } from './check-result.js'
import { checkClock } from './clock-check.js'
import { checkCloudAddress } from './cloud-address-check.js'
import { checkCloudConnection } from './cloud-connection-check.js'
import { type CredentialsResult, checkCloudCredentials } from './cloud-credentials-check.js'
import { checkListenPort } from './listen-port-check.js'
import { checkMqttBroker } from './mqtt-broker-check.js'
import type { DoctorCheck } from './run-doctor.js'
import { findRunningAgent, type RunningAgent } from './running-agent.js'
import { checkSerialPort } from './serial-port-check.js'
import { checkSpool } from './spool-check.js'
import { checkZkTerminal } from './zk-terminal-check.js'

/** Runs `work` once, on first call, with the signal of that call; later calls share its promise. */
function memo<T>(work: (signal: AbortSignal) => Promise<T>): (signal: AbortSignal) => Promise<T> {
  let result: Promise<T> | undefined
  return (signal) => {
    result ??= work(signal)
    return result
  }
}

/** What a check that depends on another says when that one did not pass. */
const after = (outcome: CheckOutcome, why: string): CheckOutcome | undefined =>
  outcome.status === 'pass' ? undefined : skip(why)

/**
 * The checks for a configuration that loaded, in the order they are reported: the cloud (each
 * step after the previous one passed), the clock, each device's transports, the listeners, the
 * spool. They all start at once; those that need the cloud's answer or the running agent's status
 * await the one shared request.
 */
export function planDoctor(config: AgentConfig, timeoutMs: number): DoctorCheck[] {
  const cloudUrl = config.cloud.url
  const address = memo((signal) => checkCloudAddress(cloudUrl, signal, timeoutMs))
  const connection = memo(async (signal) => {
    const skipped = after(await address(signal), 'the cloud address does not resolve')
    return skipped ?? checkCloudConnection(cloudUrl, signal, timeoutMs)
  })
  const credentials = memo(async (signal): Promise<CredentialsResult> => {
    const skipped = after(await connection(signal), 'the cloud cannot be reached')
    return skipped ? { outcome: skipped } : checkCloudCredentials(config.cloud, signal, timeoutMs)
  })
  // The running agent is asked once, by whichever check needs it first.
  const agent: (signal: AbortSignal) => Promise<RunningAgent> = memo((signal) =>
    findRunningAgent(config.status.listen, signal, timeoutMs),
  )

  const checks: DoctorCheck[] = [
    { check: 'cloud address', subject: cloudUrl, run: address },
    { check: 'cloud connection', subject: cloudUrl, run: connection },
    {
      check: 'cloud credentials',
      subject: cloudUrl,
      run: async (signal) => (await credentials(signal)).outcome,
    },
    {
      check: 'clock',
      subject: 'this machine',
      run: async (signal) => checkClock((await credentials(signal)).cloudDate),
    },
  ]
  for (const device of config.devices) {
    if (device.serial) {
      const serial = device.serial
      checks.push({
        check: 'serial port',
        subject: device.id,
        run: (signal) => checkSerialPort(device.id, serial, agent(signal), signal, timeoutMs),
      })
    }
    if (device.zk) {
      const zk = device.zk
      checks.push({
        check: 'zk terminal',
        subject: device.id,
        run: (signal) => checkZkTerminal(device.id, zk, agent(signal), signal, timeoutMs),
      })
    }
    if (device.adms) {
      const adms = device.adms
      checks.push({
        check: 'adms terminal',
        subject: device.id,
        run: (signal) => checkAdmsDevice(device.id, adms, config.adms?.pollSeconds ?? 10, agent(signal)),
      })
    }
  }
  const external = config.mqtt?.external
  if (external) {
    checks.push({
      check: 'mqtt broker',
      subject: external.clientId,
      run: (signal) => checkMqttBroker(external, signal, timeoutMs),
    })
  }
  const embedded = config.mqtt?.embedded
  if (embedded) {
    const listen = embedded.host.includes(':')
      ? `[${embedded.host}]:${embedded.port}`
      : `${embedded.host}:${embedded.port}`
    checks.push({
      check: 'embedded broker port',
      subject: listen,
      run: (signal) => checkListenPort(listen, agent(signal), 'embedded broker (mqtt.embedded.port)'),
    })
  }
  if (config.adms) {
    const listen = config.adms.listen
    checks.push({
      check: 'adms listener port',
      subject: listen,
      run: (signal) => checkListenPort(listen, agent(signal), 'ADMS listener (adms.listen)'),
    })
  }
  checks.push({ check: 'spool', subject: config.spool.dir, run: async () => checkSpool(config.spool) })
  checks.push({
    check: 'status port',
    subject: config.status.listen,
    // Held by the agent only if the agent answered on this very port, with this site.
    run: (signal) =>
      checkListenPort(
        config.status.listen,
        agent(signal),
        'status listener (status.listen)',
        (a) => a.status.agent.site === config.site.id,
      ),
  })
  return checks
}

/** The report when the configuration could not be used: every other check skipped, saying why. */
export function skippedWithoutConfig(): CheckResult[] {
  const why = skip('skipped: the configuration could not be read (see above)')
  return [
    { check: 'cloud', subject: '-', ...why },
    { check: 'clock', subject: 'this machine', ...why },
    { check: 'devices', subject: '-', ...why },
    { check: 'spool', subject: '-', ...why },
    { check: 'status port', subject: '-', ...why },
  ]
}
