import { isAbsolute, resolve } from 'node:path'
import { formatPath, type PathSegment } from './config-file-error.js'
import type { ProblemList } from './problem-list.js'
import { checkReadableFile, type FileResult, readSecretFile } from './secret-files.js'

/**
 * The files a configuration names: `...File` secrets, read now
 * (docs/development/architecture.md#configuration), and TLS files, only checked now so that a wrong path
 * stops the agent before it starts rather than when a device connects. A relative path is relative to the
 * configuration file's directory, not to wherever the agent was started from (systemd starts it in /).
 */

type Mapping = Record<string, unknown>

const mapping = (value: unknown): Mapping | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Mapping) : undefined

export function resolveFrom(baseDir: string, file: string): string {
  return isAbsolute(file) ? file : resolve(baseDir, file)
}

/** The secrets read, by the path of their `...File` setting (`cloud.clientSecretFile`). */
export type SecretsRead = ReadonlyMap<string, string>

interface FileSetting {
  at: PathSegment[]
  file: string
  relative: boolean
}

export async function readSettingFiles(
  document: unknown,
  baseDir: string,
  problems: ProblemList,
): Promise<SecretsRead> {
  const secrets: FileSetting[] = []
  const others: FileSetting[] = []
  const add = (list: FileSetting[], owner: Mapping | undefined, at: PathSegment[], key: string) => {
    const file = owner?.[key]
    // A value the schema or substitution already found wrong is not also reported as unreadable.
    if (typeof file === 'string' && file !== '' && !problems.has([...at, key])) {
      list.push({ at: [...at, key], file: resolveFrom(baseDir, file), relative: !isAbsolute(file) })
    }
  }
  const root = mapping(document)
  add(secrets, mapping(root?.cloud), ['cloud'], 'clientSecretFile')
  const mqtt = mapping(root?.mqtt)
  const embedded = mapping(mqtt?.embedded)
  if (Array.isArray(embedded?.users)) {
    embedded.users.forEach((user, i) => {
      add(secrets, mapping(user), ['mqtt', 'embedded', 'users', i], 'passwordFile')
    })
  }
  const tls = mapping(embedded?.tls)
  for (const key of ['certFile', 'keyFile', 'caFile']) add(others, tls, ['mqtt', 'embedded', 'tls'], key)
  const external = mapping(mqtt?.external)
  add(secrets, external, ['mqtt', 'external'], 'passwordFile')
  add(others, external, ['mqtt', 'external'], 'caFile')

  const report = <T>(setting: FileSetting, result: FileResult<T>) => {
    if (!result.ok) {
      // Where a relative path was looked for is the usual surprise (systemd starts the agent in /).
      const where = result.missing && setting.relative ? ` (a relative path is read from ${baseDir})` : ''
      problems.add(setting.at, `${result.message}${where}`)
    }
    return result
  }
  const [read] = await Promise.all([
    Promise.all(secrets.map(async (s) => ({ at: s.at, result: report(s, await readSecretFile(s.file)) }))),
    Promise.all(others.map(async (s) => report(s, await checkReadableFile(s.file)))),
  ])
  const out = new Map<string, string>()
  for (const { at, result } of read) if (result.ok) out.set(formatPath(at), result.value)
  return out
}
