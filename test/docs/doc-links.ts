import { execFile } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * `npm run lint:docs`: every relative link and heading anchor in the repository's Markdown must
 * point at something that exists. The checking is remark-validate-links' (run through remark-cli):
 * it works offline, resolves links to files and folders, and checks anchors against headings with
 * GitHub's slug rules (github-slugger), also across files. This module picks the files, runs it and
 * turns its report into one line per broken link.
 */

/** Folders that hold installed or generated files, not the project's documents. */
const SKIPPED_DIRECTORIES = new Set(['node_modules', 'dist', 'data', 'coverage', 'test-results'])
const SKIPPED_PATHS = new Set([join('bench', 'results')])

export const REPOSITORY_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** Every Markdown file under `root`, relative to it, sorted. */
export function markdownFiles(root: string): string[] {
  const found: string[] = []
  const walk = (directory: string): void => {
    for (const entry of readdirSync(join(root, directory), { withFileTypes: true })) {
      const path = directory === '' ? entry.name : join(directory, entry.name)
      if (entry.isDirectory()) {
        if (entry.name.startsWith('.') || SKIPPED_DIRECTORIES.has(entry.name) || SKIPPED_PATHS.has(path))
          continue
        walk(path)
      } else if (entry.isFile() && entry.name.toLowerCase().endsWith('.md')) {
        found.push(path.split(sep).join('/'))
      }
    }
  }
  walk('')
  return found.sort()
}

export interface BrokenLink {
  /** The Markdown file, relative to the root. */
  file: string
  line: number
  column: number
  /** remark-validate-links' message, e.g. "Cannot find heading for `#x` in `a.md`". */
  message: string
}

const require = createRequire(import.meta.url)

/** Checks every Markdown file under `root`; resolves to the broken links, none when all is well. */
export async function checkDocLinks(root: string = REPOSITORY_ROOT): Promise<BrokenLink[]> {
  const files = markdownFiles(root)
  if (files.length === 0) return []
  // remark-cli exports nothing to import; as a direct devDependency npm puts it at the top level.
  const cli = join(REPOSITORY_ROOT, 'node_modules', 'remark-cli', 'cli.js')
  const plugin = require.resolve('remark-validate-links')
  // repository:false: check the files on disk, without asking git for a remote to build URLs from.
  const args = [
    cli,
    '--no-config',
    '--no-ignore',
    '--no-stdout',
    '--no-color',
    '--quiet',
    '--frail',
    '--use',
    `${plugin}=repository:false`,
    ...files,
  ]
  const { code, stderr } = await new Promise<{ code: number; stderr: string }>((resolveRun) => {
    execFile(process.execPath, args, { cwd: root, maxBuffer: 16 * 1024 * 1024 }, (err, _stdout, errOut) => {
      resolveRun({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stderr: errOut })
    })
  })
  const broken = parseReport(stderr)
  if (code !== 0 && broken.length === 0) {
    // remark failed for another reason (a file it could not read, a plugin it could not load):
    // that must not pass as "no broken links".
    throw new Error(`remark exited ${code} without a link message:\n${stderr}`)
  }
  return broken
}

/**
 * The default (vfile-reporter) report: a line naming a file, then one line per message,
 * `line:col[-line:col] warning <text> <rule> <source>:<rule>`.
 */
export function parseReport(report: string): BrokenLink[] {
  const broken: BrokenLink[] = []
  let file: string | undefined
  for (const raw of report.split('\n')) {
    const line = raw.trimEnd()
    const message = /^\s*(\d+):(\d+)(?:-\d+:\d+)?\s+(?:warning|error)\s+(.*)$/.exec(line)
    if (message && file !== undefined) {
      let text = message[3] as string
      const origin = /\s+[\w-]+:([\w-]+)$/.exec(text)
      if (origin) {
        text = text.slice(0, origin.index).trimEnd()
        const rule = origin[1] as string
        if (text.endsWith(` ${rule}`)) text = text.slice(0, -rule.length).trimEnd()
      }
      broken.push({ file, line: Number(message[1]), column: Number(message[2]), message: text })
    } else if (line !== '' && !/^\s/.test(line) && !/^[⚠✖]/.test(line)) {
      file = line.trim()
    }
  }
  return broken
}

export function formatBroken(broken: readonly BrokenLink[]): string {
  return broken.map((b) => `${b.file}:${b.line}:${b.column}: ${b.message}`).join('\n')
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const broken = await checkDocLinks()
  if (broken.length > 0) {
    process.stderr.write(`${formatBroken(broken)}\n${broken.length} broken link(s) in Markdown files\n`)
    process.exitCode = 1
  } else {
    process.stdout.write(`Markdown links: ${markdownFiles(REPOSITORY_ROOT).length} files, no broken link\n`)
  }
}
