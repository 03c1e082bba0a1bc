import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** What the version reads as when no package.json could be found or read. */
export const UNKNOWN_VERSION = 'unknown'

/**
 * The version in the nearest package.json at or above `from` (a module's URL or path) that has
 * one. The agent runs from the repository (agent/ under tsx, or dist/agent/), whose package.json
 * is the repository's, and from the installed package (scripts/package-agent.ts), whose
 * package.json sits at the package root above dist/: both are found by walking up from the code
 * itself, never from the working directory, which a service manager sets to anything. A
 * package.json without a version (a `{"type":"module"}` marker in a folder) is passed over.
 */
export function findAgentVersion(from: string | URL): string {
  const start = typeof from === 'string' && !from.startsWith('file:') ? from : fileURLToPath(from)
  for (let dir = dirname(start); ; dir = dirname(dir)) {
    const version = versionIn(join(dir, 'package.json'))
    if (version !== undefined) return version
    if (dirname(dir) === dir) return UNKNOWN_VERSION
  }
}

function versionIn(file: string): string | undefined {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
  try {
    const version = (JSON.parse(text) as { version?: unknown }).version
    return typeof version === 'string' && version.length > 0 ? version : undefined
  } catch {
    return undefined
  }
}

let cached: string | undefined

/** This agent's version (`hajri-agent --version`, the status, the spool's format marker). */
export function agentVersion(): string {
  cached ??= findAgentVersion(import.meta.url)
  return cached
}
