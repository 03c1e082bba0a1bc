import net from 'node:net'
import tls from 'node:tls'
import { type CheckOutcome, describeError, fail, pass } from './check-result.js'
import { cloudHost } from './cloud-address-check.js'
import { stepSignal } from './step-timeout.js'

/** Certificate errors (node's TLS codes) that mean "not verified", not "not reached". */
const CERT_ERROR = /CERT|SELF_SIGNED|ALTNAME|UNABLE_TO_(GET|VERIFY)|ISSUER/

/**
 * A TCP connection to cloud.url's host and port opens and, for https, its TLS handshake verifies
 * the certificate for that host against this machine's trusted CAs (node's, plus
 * NODE_EXTRA_CA_CERTS), as the agent's requests do. Closed again at once.
 */
export async function checkCloudConnection(
  url: string,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<CheckOutcome> {
  const parsed = new URL(url)
  const host = cloudHost(url)
  const https = parsed.protocol === 'https:'
  const port = Number(parsed.port || (https ? 443 : 80))
  const step = stepSignal(signal, timeoutMs)
  try {
    const detail = await new Promise<string>((resolve, reject) => {
      const socket = https
        ? tls.connect({ host, port, servername: net.isIP(host) === 0 ? host : undefined })
        : net.connect({ host, port })
      const onAbort = () =>
        done(new Error(signal.aborted ? 'the run was stopped' : `no answer within ${timeoutMs / 1000} s`))
      const done = (result: string | Error) => {
        step.removeEventListener('abort', onAbort)
        socket.destroy()
        if (result instanceof Error) reject(result)
        else resolve(result)
      }
      step.addEventListener('abort', onAbort, { once: true })
      socket.once('error', done)
      if (socket instanceof tls.TLSSocket) {
        socket.once('secureConnect', () => {
          const cert = socket.getPeerCertificate()
          const until = cert.valid_to
            ? `, valid until ${new Date(cert.valid_to).toISOString().slice(0, 10)}`
            : ''
          done(`${host}:${port} connects; TLS ${socket.getProtocol()} verified for ${host}${until}`)
        })
      } else {
        socket.once('connect', () => done(`${host}:${port} connects (http: no TLS to verify)`))
      }
    })
    return pass(detail)
  } catch (err) {
    const reason = describeError(err)
    if (CERT_ERROR.test(reason)) {
      return fail(
        `TLS does not verify for ${host} (${reason})`,
        "the certificate is expired, for another name, or from a CA this machine does not trust (a company proxy that inspects TLS?): fix the server's certificate, or give the CA with NODE_EXTRA_CA_CERTS",
      )
    }
    return fail(
      `cannot connect to ${host}:${port} (${reason})`,
      'check that the cloud is up and that a firewall or proxy lets this machine reach that port (curl the cloud.url)',
    )
  }
}
