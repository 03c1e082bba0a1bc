import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The parts of a V8 .cpuprofile (Chrome DevTools Protocol Profiler.Profile) read here. */
interface CpuProfile {
  nodes: {
    id: number
    callFrame: { functionName: string; url: string; lineNumber: number }
    children?: number[]
  }[]
  samples: number[]
  /** µs before each sample. */
  timeDeltas: number[]
}

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))
const PSEUDO = new Set(['(root)', '(program)', '(idle)', '(garbage collector)'])
const TOP = 25

/** The agent compiled by agent-compile.ts runs from <temporary dir>/build/out/, the repository's layout. */
const COMPILED = /\/build\/out\/((?:agent|cloud|shared)\/.+)$/

function where(url: string): string {
  const path = url.startsWith('file://') ? fileURLToPath(url) : url
  const inModules = path.lastIndexOf('node_modules/')
  if (inModules >= 0) return path.slice(inModules + 'node_modules/'.length)
  const compiled = COMPILED.exec(path)
  if (compiled) return compiled[1] as string
  return path.startsWith(REPO_ROOT) ? path.slice(REPO_ROOT.length) : path
}

/** What a frame belongs to: a package, Node's own code, a native call, or a file of Hajri. */
function area(url: string, functionName: string): string {
  if (PSEUDO.has(functionName)) return functionName
  if (url === '') return '(native: V8 builtins, C++ addons such as better-sqlite3)'
  if (url.startsWith('node:')) return 'node core'
  const at = where(url)
  if (url.includes('node_modules/')) {
    const parts = at.split('/')
    return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? at)
  }
  return at
}

function percent(part: number, whole: number): string {
  return `${((part / whole) * 100).toFixed(1)}%`
}

function table(title: string, rows: [string, number][], whole: number): string[] {
  const lines = [`${title}`, '', '| share of busy time | ms | frame |', '| --- | --- | --- |']
  for (const [name, us] of rows) lines.push(`| ${percent(us, whole)} | ${(us / 1000).toFixed(0)} | ${name} |`)
  return [...lines, '']
}

function top(map: Map<string, number>, n = TOP): [string, number][] {
  return [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, n)
}

// Node names profiles CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile; the main thread is 0.
const MAIN_THREAD_PROFILE = /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/

/**
 * Reads the main thread's profile in `directory` (written by --cpu-prof), writes summary.md beside
 * it and returns that markdown: self time by package and by function, and inclusive time of
 * Hajri's own functions (where a request's time goes, in the project's terms).
 */
export async function summarizeCpuProfile(directory: string, name: string): Promise<string> {
  const file = (await readdir(directory)).find((f) => MAIN_THREAD_PROFILE.test(f))
  if (!file) throw new Error(`no main-thread CPU profile in ${directory}`)
  const profile = JSON.parse(await readFile(join(directory, file), 'utf8')) as CpuProfile
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id)
  const key = (id: number) => {
    const f = nodes.get(id)?.callFrame
    if (!f) return '?'
    const fn = f.functionName || '(anonymous)'
    if (f.url === '') return fn
    // tsx runs Hajri's own files transformed, where every frame reports line 1: leave it out.
    return f.lineNumber === 0 ? `${fn} ${where(f.url)}` : `${fn} ${where(f.url)}:${f.lineNumber + 1}`
  }

  const self = new Map<string, number>()
  const byArea = new Map<string, number>()
  const inclusive = new Map<string, number>()
  let total = 0
  let idle = 0
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0
    const frame = nodes.get(id)?.callFrame
    if (!frame) return
    total += dt
    if (frame.functionName === '(idle)') {
      idle += dt
      return
    }
    const k = key(id)
    self.set(k, (self.get(k) ?? 0) + dt)
    const a = area(frame.url, frame.functionName)
    byArea.set(a, (byArea.get(a) ?? 0) + dt)
    // Each Hajri function on the stack once per sample, however deep it recurses.
    const seen = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = nodes.get(at)?.callFrame
      if (
        !f ||
        f.url === '' ||
        f.url.includes('node_modules/') ||
        !where(f.url).match(/^(agent|cloud|shared)\//)
      )
        continue
      seen.add(key(at))
    }
    for (const k2 of seen) inclusive.set(k2, (inclusive.get(k2) ?? 0) + dt)
  })
  const busy = total - idle
  const markdown = [
    `Profile ${name} (${join(directory, file)}): ${(total / 1e6).toFixed(1)} s sampled, ${percent(idle, total)} idle; shares below are of the ${(busy / 1e6).toFixed(1)} s busy.`,
    '',
    ...table('Self time by package or file:', top(byArea, 15), busy),
    ...table('Self time by function:', top(self), busy),
    ...table('Inclusive time of Hajri functions (agent/, cloud/, shared/):', top(inclusive), busy),
  ].join('\n')
  await writeFile(join(directory, 'summary.md'), `${markdown}\n`)
  return markdown
}
