import pino from 'pino'
import type { AgentConfig } from '../config/schema.js'
import { createHttpClient } from '../uplink/http-client.js'
import { TokenClient } from '../uplink/token-client.js'
import { type CheckOutcome, describeError, fail, pass } from './check-result.js'
import { stepSignal } from './step-timeout.js'

/** The cloud's clock as its answer showed it, for the clock check. */
export interface CloudDate {
  /** The answer's Date header (RFC 9110 §6.6.1), ms since the epoch; undefined when it sent none. */
  dateMs: number | undefined
  /** This machine's clock when the request was sent and when its answer came. */
  sentAtMs: number
  receivedAtMs: number
}

export interface CredentialsResult {
  outcome: CheckOutcome
  /** Undefined when no answer came. */
  cloudDate?: CloudDate
}

/**
 * Asks for an access token exactly as the agent does (uplink/token-client.ts over
 * uplink/http-client.ts: client_credentials, RFC 6749 §4.4, with cloud.scope), so a refusal here is
 * the agent's refusal. The token is dropped at once, never shown; so is the secret.
 */
export async function checkCloudCredentials(
  cloud: AgentConfig['cloud'],
  signal: AbortSignal,
  timeoutMs: number,
  now: () => number = Date.now,
): Promise<CredentialsResult> {
  const client = createHttpClient({ url: cloud.url, timeoutSeconds: cloud.timeoutSeconds, concurrency: 1 })
  let cloudDate: CloudDate | undefined
  const sentAtMs = now()
  const http = client.http.extend({
    signal: stepSignal(signal, timeoutMs),
    timeout: { request: Math.min(timeoutMs, cloud.timeoutSeconds * 1000) },
    hooks: {
      afterResponse: [
        (response) => {
          const header = response.headers.date
          const parsed = header === undefined ? Number.NaN : Date.parse(header)
          cloudDate = {
            dateMs: Number.isNaN(parsed) ? undefined : parsed,
            sentAtMs,
            receivedAtMs: now(),
          }
          return response
        },
      ],
    },
  })
  const tokens = new TokenClient({
    http,
    clientId: cloud.clientId,
    clientSecret: cloud.clientSecret,
    scope: cloud.scope,
    log: pino({ level: 'silent' }),
  })
  const who = `client ${cloud.clientId}, scope ${cloud.scope}`
  try {
    await tokens.token()
    return { outcome: pass(`${who}: the cloud issued an access token`), ...(cloudDate && { cloudDate }) }
  } catch (err) {
    const reason = describeError(err)
    const outcome = /refused a token/.test(reason)
      ? fail(
          `${who}: ${reason}`,
          /invalid_scope/.test(reason)
            ? "the OAuth app lacks that scope: give it attendance:write in the console's OAuth apps, or fix cloud.scope"
            : "check cloud.clientId and cloud.clientSecret (or clientSecretFile) against the agent's OAuth app in the console; a new secret can be made there",
        )
      : fail(
          `${who}: no answer to the token request (${reason})`,
          'the cloud was not reached or did not answer: see the cloud connection check, and that cloud.url is the cloud’s address (not the console page)',
        )
    return { outcome, ...(cloudDate && { cloudDate }) }
  } finally {
    client.close()
  }
}
