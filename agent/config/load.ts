import { readFile, stat } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { parseByteSize } from './byte-size.js'
import { ConfigFileError, TOP_LEVEL } from './config-file-error.js'
import { checkCrossFields } from './cross-field-checks.js'
import { substituteEnv } from './env-substitution.js'
import { ProblemList } from './problem-list.js'
import { type AgentConfig, type AgentConfigFile, AgentConfigSchema } from './schema.js'
import { fillDefaults } from './schema-defaults.js'
import { checkAgainstSchema } from './schema-validation.js'
import { readSettingFiles, resolveFrom, type SecretsRead } from './setting-files.js'
import { parseYamlSource } from './yaml-source.js'

/** A configuration file is a page of YAML; anything this big is the wrong file (or /dev/zero). */
const MAX_CONFIG_BYTES = 1024 * 1024

export interface LoadOptions {
  /** ms since the epoch, for the checks that depend on the date (site.clockFloor). */
  now?: number
}

/**
 * Reads, checks and completes the agent's configuration (docs/decisions/0023-agent-yaml-configuration.md),
 * before anything starts (zigbee2mqtt's rule, docs/decisions/0033-code-style.md):
 *
 * 1. YAML 1.2 is parsed; syntax errors stop here, with line and column.
 * 2. `${NAME}` in string values is replaced from `env` (env-substitution.ts).
 * 3. Defaults are filled from the schema, the only place they are written.
 * 4. The document is validated against AgentConfigSchema, then by the rules a schema cannot say
 *    (cross-field-checks.ts); the `...File` secrets are read, and TLS files checked.
 * 5. Any problem: ConfigFileError with every problem found, each at its path. Otherwise the runtime
 *    form: secrets in their fields, sizes (`spool.maxBytes`, `adms.maxBodyBytes`) in bytes, and every file path (spool.dir,
 *    TLS files) absolute, a relative one taken from the configuration file's directory.
 */
export async function loadAgentConfig(
  file: string,
  env: NodeJS.ProcessEnv,
  options: LoadOptions = {},
): Promise<AgentConfig> {
  const path = resolve(file)
  const baseDir = dirname(path)
  const parsed = parseYamlSource(await readConfigText(path))
  if (!parsed.ok) throw new ConfigFileError(path, parsed.problems)
  const { source } = parsed
  if (source.value === null || source.value === undefined) {
    throw new ConfigFileError(path, [
      { path: TOP_LEVEL, message: 'the file holds no settings: see deploy/agent.example.yaml' },
    ])
  }

  const problems = new ProblemList()
  const substituted = substituteEnv(source.value, env, problems)
  const document = fillDefaults(AgentConfigSchema, substituted)
  checkAgainstSchema(document, problems)
  checkCrossFields(document, problems, options.now)
  const secrets = await readSettingFiles(document, baseDir, problems)
  if (problems.size > 0) throw new ConfigFileError(path, problems.toProblems(source.locate))
  return toRuntimeConfig(document as AgentConfigFile, secrets, baseDir)
}

/** The file's text; a file that cannot be read is a ConfigFileError saying why. */
export async function readConfigText(path: string): Promise<string> {
  const fail = (message: string) => new ConfigFileError(path, [{ path, message }])
  try {
    const info = await stat(path)
    if (info.isDirectory()) throw fail('is a directory, not a configuration file')
    if (!info.isFile()) throw fail('is not a file')
    if (info.size > MAX_CONFIG_BYTES) throw fail('is larger than 1 MiB: not a configuration file')
    return await readFile(path, 'utf8')
  } catch (err) {
    if (err instanceof ConfigFileError) throw err
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT') throw fail('does not exist')
    if (code === 'EACCES' || code === 'EPERM') throw fail('cannot be read by this user (permission denied)')
    throw fail(`cannot be read (${code ?? String(err)})`)
  }
}

type MqttFile = NonNullable<AgentConfigFile['mqtt']>
type RuntimeMqtt = NonNullable<AgentConfig['mqtt']>

function toRuntimeConfig(file: AgentConfigFile, secrets: SecretsRead, baseDir: string): AgentConfig {
  // Every problem has been ruled out by now, so each secret below is there.
  const secret = (inline: string | undefined, fileSetting: string) => inline ?? secrets.get(fileSetting) ?? ''
  const { mqtt, cloud, spool, adms, ...rest } = file
  const { clientSecretFile: _file, ...cloudRest } = cloud
  const maxBytes = parseByteSize(spool.maxBytes)
  const config: AgentConfig = {
    ...rest,
    cloud: { ...cloudRest, clientSecret: secret(cloud.clientSecret, 'cloud.clientSecretFile') },
    spool: { ...spool, dir: resolveFrom(baseDir, spool.dir), maxBytes: maxBytes.ok ? maxBytes.bytes : 0 },
  }
  if (mqtt) config.mqtt = runtimeMqtt(mqtt, secret, baseDir)
  if (adms) {
    const bodyBytes = parseByteSize(adms.maxBodyBytes)
    config.adms = { ...adms, maxBodyBytes: bodyBytes.ok ? bodyBytes.bytes : 0 }
  }
  return config
}

function runtimeMqtt(
  mqtt: MqttFile,
  secret: (inline: string | undefined, fileSetting: string) => string,
  baseDir: string,
): RuntimeMqtt {
  const out: RuntimeMqtt = {}
  if (mqtt.embedded) {
    const { tls, users, ...embedded } = mqtt.embedded
    out.embedded = {
      ...embedded,
      users: users.map((user, i) => ({
        username: user.username,
        password: secret(user.password, `mqtt.embedded.users[${i}].passwordFile`),
      })),
    }
    if (tls) {
      out.embedded.tls = {
        certFile: resolveFrom(baseDir, tls.certFile),
        keyFile: resolveFrom(baseDir, tls.keyFile),
      }
      if (tls.caFile !== undefined) out.embedded.tls.caFile = resolveFrom(baseDir, tls.caFile)
    }
  }
  if (mqtt.external) {
    const { passwordFile, ...external } = mqtt.external
    out.external = external
    if (passwordFile !== undefined) external.password = secret(undefined, 'mqtt.external.passwordFile')
    if (external.caFile !== undefined) external.caFile = resolveFrom(baseDir, external.caFile)
  }
  return out
}
