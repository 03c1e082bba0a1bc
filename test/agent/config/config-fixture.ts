import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'
import { stringify } from 'yaml'
import { ConfigFileError, type ConfigProblem } from '../../../agent/config/config-file-error.js'
import { type LoadOptions, loadAgentConfig } from '../../../agent/config/load.js'
import type { AgentConfig } from '../../../agent/config/schema.js'

/** A client secret that must never show up in a message. */
export const CLIENT_SECRET = 'cs-Wq8!zR2#pL5vN'

// biome-ignore lint/suspicious/noExplicitAny: test documents are edited freely, wrong types included.
export type Doc = Record<string, any>

/** The smallest valid configuration: everything else is a default. */
export function minimalDoc(): Doc {
  return {
    site: { id: 'pune-plant-1' },
    cloud: { url: 'https://hajri.example.com', clientId: 'hjc_test', clientSecret: CLIENT_SECRET },
    devices: [{ id: 'main-door', serial: { path: '/dev/ttyUSB0' } }],
  }
}

/** A temporary directory holding a configuration file and the files it names. */
export class ConfigDir {
  private constructor(readonly dir: string) {}

  static async create(): Promise<ConfigDir> {
    return new ConfigDir(await mkdtemp(join(tmpdir(), 'hajri-agent-config-')))
  }

  async remove(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true })
  }

  /** Writes a file under the directory; returns its absolute path. */
  async write(name: string, content: string | Buffer): Promise<string> {
    const path = join(this.dir, name)
    await mkdir(dirname(path), { recursive: true })
    await writeFile(path, content)
    return path
  }

  /** Writes `doc` (YAML text or an object to serialise) as agent.yaml. */
  async writeConfig(doc: Doc | string, name = 'agent.yaml'): Promise<string> {
    return this.write(name, typeof doc === 'string' ? doc : stringify(doc))
  }

  async load(
    doc: Doc | string,
    env: NodeJS.ProcessEnv = {},
    options: LoadOptions = {},
  ): Promise<AgentConfig> {
    return loadAgentConfig(await this.writeConfig(doc), env, options)
  }

  /** The problems of a file that must not load. */
  async problems(
    doc: Doc | string,
    env: NodeJS.ProcessEnv = {},
    options: LoadOptions = {},
  ): Promise<ConfigProblem[]> {
    return (await this.failure(doc, env, options)).problems as ConfigProblem[]
  }

  async failure(
    doc: Doc | string,
    env: NodeJS.ProcessEnv = {},
    options: LoadOptions = {},
  ): Promise<ConfigFileError> {
    const error = await this.load(doc, env, options).then(
      () => undefined,
      (err: unknown) => err,
    )
    expect(error, 'the configuration loaded, but should not have').toBeInstanceOf(ConfigFileError)
    return error as ConfigFileError
  }
}

/** `{path: message}` of problems, for exact comparisons. */
export function byPath(problems: readonly ConfigProblem[]): Record<string, string> {
  return Object.fromEntries(problems.map((p) => [p.path, p.message]))
}

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
export const EXAMPLE = join(REPO_ROOT, 'deploy/agent.example.yaml')

/** What deploy/agent.example.yaml needs from its surroundings: two variables and one file. */
export const EXAMPLE_ENV = {
  HAJRI_CLIENT_SECRET: 'example-client-secret',
  HAJRI_CANTEEN_MQTT_PASSWORD: 'canteen-pw',
}
export async function exampleInto(files: ConfigDir): Promise<string> {
  await files.write('gate-1.pass', 'gate-1-pw\n')
  const path = join(files.dir, 'agent.yaml')
  await copyFile(EXAMPLE, path)
  return path
}
