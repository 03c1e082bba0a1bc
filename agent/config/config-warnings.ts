import { isLoopbackHost } from '../../shared/loopback-host.js'
import type { ConfigProblem } from './config-file-error.js'
import { formatPath } from './config-file-error.js'
import { parseListenAddress } from './listen-address.js'
import type { AgentConfig } from './schema.js'

/**
 * What a configuration allows but should rarely say: settings that work, and that leave something
 * open. Unlike the problems of a file (ConfigFileError), a warning does not stop the agent:
 * `check-config` prints each and still exits 0, and `run` logs each at warn when it starts. Same
 * shape as a problem (a path, a message that never holds a secret), without a line: warnings are
 * found on the loaded configuration, after the file's text is gone.
 */
export function configWarnings(config: AgentConfig): ConfigProblem[] {
  const warnings: ConfigProblem[] = []
  const warn = (at: (string | number)[], message: string) => warnings.push({ path: formatPath(at), message })

  // The status listener shows employee codes and punch times (/status,
  // /dead-letters) to whoever reaches it, and needs no password to read.
  const listen = parseListenAddress(config.status.listen)
  if (listen && !isLoopbackHost(listen.host)) {
    warn(
      ['status', 'listen'],
      `listens beyond this machine (${listen.host}): anyone who reaches it can read the agent's status and dead letters, with employee codes and punch times; keep it on 127.0.0.1 unless a firewall limits who can reach it`,
    )
  }

  // Allowed on purpose (cloud.allowInsecure), and still worth saying.
  if (config.cloud.allowInsecure === true && /^http:/i.test(config.cloud.url)) {
    const host = new URL(config.cloud.url).hostname
    if (!isLoopbackHost(host)) {
      warn(
        ['cloud', 'url'],
        'uses http:// to another machine (cloud.allowInsecure): the client secret and every punch cross the network in clear text',
      )
    }
  }

  // A device bound to no user takes punches from every user of the broker, so
  // one device's credentials could forge its punches.
  if ((config.mqtt?.embedded?.users.length ?? 0) > 0) {
    config.devices.forEach((device, i) => {
      if (device.mqtt && device.mqtt.username === undefined) {
        warn(
          ['devices', i, 'mqtt', 'username'],
          `is not set, so any of the embedded broker's users may publish ${device.id}'s punches: set it to the user ${device.id} connects as`,
        )
      }
    })
  }
  return warnings
}
