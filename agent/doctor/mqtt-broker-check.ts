import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import type { AgentConfig } from '../config/schema.js'
import { type CheckOutcome, describeError, fail, pass } from './check-result.js'
import { stepSignal, untilAborted } from './step-timeout.js'

type ExternalBroker = NonNullable<NonNullable<AgentConfig['mqtt']>['external']>

/** The broker URL as shown: without a password written into it. */
function shownUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return url
  }
}

/**
 * The site's MQTT broker accepts a connection with the configured username, password and CA.
 * Under a client id of its own and a clean session: a CONNECT with the agent's client id would
 * make the broker close the agent's connection (MQTT 3.1.1 §3.1.4), and a clean one would discard
 * the agent's persistent session with the punches queued in it (§3.1.2.4).
 */
export async function checkMqttBroker(
  external: ExternalBroker,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<CheckOutcome> {
  const { connect } = await import('mqtt')
  const step = stepSignal(signal, timeoutMs)
  const url = shownUrl(external.url)
  let ca: Buffer | undefined
  try {
    ca = external.caFile ? await readFile(external.caFile) : undefined
  } catch (err) {
    return fail(
      `mqtt.external.caFile cannot be read (${describeError(err)})`,
      'fix the path or its permissions',
    )
  }
  const client = connect(external.url, {
    clientId: `${external.clientId.slice(0, 100)}-doctor-${randomBytes(4).toString('hex')}`,
    clean: true,
    protocolVersion: 4,
    username: external.username,
    password: external.password,
    ca,
    connectTimeout: timeoutMs,
    reconnectPeriod: 0,
  })
  try {
    await untilAborted(
      new Promise<void>((resolve, reject) => {
        client.once('connect', () => resolve())
        client.once('error', reject)
        client.once('close', () => reject(new Error('the broker closed the connection')))
      }),
      step,
      `connecting to ${url}`,
    )
    return pass(`${url} accepts a connection${external.username ? ` as ${external.username}` : ''}`)
  } catch (err) {
    const reason = describeError(err)
    if (
      /not authori[sz]ed|bad user ?name or password|Connection refused: (Not authorized|Bad)/i.test(reason)
    ) {
      return fail(
        `${url} refuses the credentials (${reason})`,
        "check mqtt.external.username and password (or passwordFile) against the broker's users and its ACL",
      )
    }
    return fail(
      `${url} does not accept a connection (${reason})`,
      'check that the broker is running and reachable from this machine (host, port, firewall), and for mqtts:// its certificate and caFile',
    )
  } finally {
    await new Promise<void>((resolve) => client.end(true, {}, () => resolve()))
  }
}
