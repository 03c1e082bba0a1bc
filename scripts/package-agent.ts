/**
 * `npm run package:agent`: the agent as one npm tarball a site installs offline, with nothing to
 * compile (docs/decisions/0086-agent-package.md): dist/agent-package/hajri-agent-<version>.tgz.
 *
 * 1. agent/ is compiled on its own (and, through its imports, the parts of shared/ it uses);
 * 2. its runtime dependencies are the bare imports of the compiled files, at the versions of the
 *    repository's package.json; one that is not declared there, or is a cloud-only native module,
 *    stops the build;
 * 3. those packages and everything they need at run time are copied from this repository's
 *    node_modules, as Node resolves them, into the package's node_modules, and listed in
 *    bundleDependencies, so `npm pack` puts them in the tarball and `npm install -g` of the file
 *    fetches nothing.
 */
import { execFile } from 'node:child_process'
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { builtinModules } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import ts from 'typescript'

const run = promisify(execFile)

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')

/** Where `npm run package:agent` writes: inside dist/, which git and the linters ignore. */
export const DEFAULT_OUT_DIR = join(REPO_ROOT, 'dist', 'agent-package')

/**
 * Packages the agent must never carry: native modules of the cloud that would compile on install
 * (better-sqlite3), and the cloud's console. An import of one of them is a layering mistake.
 */
export const FORBIDDEN_PACKAGES = ['better-sqlite3', 'react', 'react-dom', 'vite', 'pg', 'kysely', 'ioredis']

export interface AgentPackage {
  /** The .tgz, absolute. */
  tarball: string
  version: string
  /** The agent's direct runtime dependencies, name to exact version. */
  dependencies: Record<string, string>
  /** Every package in the bundle, by its path under node_modules (`a`, `a/node_modules/b`). */
  bundled: string[]
  bytes: number
}

interface RootManifest {
  version: string
  dependencies: Record<string, string>
}

interface Manifest {
  name: string
  version: string
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
  peerDependenciesMeta?: Record<string, { optional?: boolean }>
  scripts?: Record<string, string>
}

export async function buildAgentPackage(options: { outDir?: string } = {}): Promise<AgentPackage> {
  const outDir = resolve(options.outDir ?? DEFAULT_OUT_DIR)
  const root = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as RootManifest
  const stage = await mkdtemp(join(tmpdir(), 'hajri-agent-package-'))
  try {
    const pkg = join(stage, 'package')
    await compileAgent(stage, pkg)
    const dependencies = await runtimeDependencies(join(pkg, 'dist'), root)
    const bundled = await copyDependencyTree(Object.keys(dependencies), join(pkg, 'node_modules'))
    await writeFile(
      join(pkg, 'package.json'),
      `${JSON.stringify(agentManifest(root.version, dependencies), null, 2)}\n`,
    )
    await mkdir(outDir, { recursive: true })
    const tarball = join(outDir, `hajri-agent-${root.version}.tgz`)
    await rm(tarball, { force: true })
    // --ignore-scripts: the package has none, and nothing of the repository's may run here.
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', outDir], {
      cwd: pkg,
      maxBuffer: 64 * 1024 * 1024,
    })
    return { tarball, version: root.version, dependencies, bundled, bytes: (await stat(tarball)).size }
  } finally {
    await rm(stage, { recursive: true, force: true })
  }
}

function agentManifest(version: string, dependencies: Record<string, string>) {
  return {
    name: 'hajri-agent',
    version,
    description:
      'Hajri site agent: reads biometric devices and forwards every punch to Hajri (docs/site-agent/install.md).',
    license: 'UNLICENSED',
    type: 'module',
    engines: { node: '>=20.11' },
    bin: { 'hajri-agent': 'dist/agent/main.js' },
    files: ['dist/'],
    dependencies,
    bundleDependencies: Object.keys(dependencies),
  }
}

/** tsc on agent/ alone, into `pkg`/dist (dist/agent, dist/shared): no source maps, no cloud. */
async function compileAgent(stage: string, pkg: string): Promise<void> {
  const tsconfig = join(stage, 'tsconfig.json')
  await writeFile(
    tsconfig,
    JSON.stringify({
      extends: join(REPO_ROOT, 'tsconfig.json'),
      compilerOptions: {
        noEmit: false,
        rootDir: REPO_ROOT,
        outDir: join(pkg, 'dist'),
        sourceMap: false,
        incremental: false,
        // The configuration is outside the repository: @types are looked up from there otherwise.
        typeRoots: [join(REPO_ROOT, 'node_modules', '@types')],
      },
      include: [join(REPO_ROOT, 'agent')],
    }),
  )
  const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
  try {
    await run(process.execPath, [tsc, '-p', tsconfig], { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 })
  } catch (err) {
    throw new Error(`tsc failed:\n${(err as { stdout?: string }).stdout ?? (err as Error).message}`)
  }
  const top = (await readdir(join(pkg, 'dist'))).sort()
  if (top.join(',') !== 'agent,shared') {
    throw new Error(`the agent's build holds ${top.join(', ')}: agent/ must import only agent/ and shared/`)
  }
}

/**
 * The bare specifiers of every .js file under `dir`, as package names, with the files that import
 * them: static and dynamic imports, re-exports and require() calls, as TypeScript's own
 * pre-processor reads them (so `from` in a string or a comment is not taken for an import).
 */
export async function bareImports(dir: string): Promise<Map<string, string[]>> {
  const builtins = new Set(builtinModules)
  const found = new Map<string, string[]>()
  for (const file of await filesUnder(dir, '.js')) {
    const text = await readFile(file, 'utf8')
    for (const { fileName: specifier } of ts.preProcessFile(text, true, true).importedFiles) {
      if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) continue
      if (builtins.has(specifier) || builtins.has(specifier.split('/')[0] as string)) continue
      const parts = specifier.split('/')
      const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string)
      const users = found.get(name) ?? []
      users.push(relative(dir, file))
      found.set(name, users)
    }
  }
  return found
}

async function runtimeDependencies(distDir: string, root: RootManifest): Promise<Record<string, string>> {
  const imports = await bareImports(distDir)
  const problems: string[] = []
  const dependencies: Record<string, string> = {}
  for (const [name, files] of [...imports].sort(([a], [b]) => a.localeCompare(b))) {
    const version = root.dependencies[name]
    if (FORBIDDEN_PACKAGES.includes(name))
      problems.push(`${name} (imported by ${files[0]}) must not be in the agent`)
    else if (version === undefined)
      problems.push(`${name} (imported by ${files[0]}) is not in package.json dependencies`)
    else dependencies[name] = version
  }
  if (problems.length > 0) throw new Error(`the agent's imports:\n${problems.join('\n')}`)
  return dependencies
}

/**
 * Copies `names` and what they need at run time (dependencies, optional ones that are installed,
 * peers that are not optional) from the repository's node_modules, each where Node finds it from
 * the package that needs it: the nearest node_modules up the tree. Returns their paths under
 * node_modules.
 */
async function copyDependencyTree(names: readonly string[], targetModules: string): Promise<string[]> {
  const sourceModules = join(REPO_ROOT, 'node_modules')
  const copied = new Set<string>()
  const queue: { name: string; from: string; optional: boolean }[] = names.map((name) => ({
    name,
    from: REPO_ROOT,
    optional: false,
  }))
  for (let item = queue.shift(); item; item = queue.shift()) {
    const dir = await resolvePackageDir(item.name, item.from)
    if (dir === undefined) {
      if (item.optional) continue
      throw new Error(
        `${item.name}, needed by ${relative(REPO_ROOT, item.from) || 'the agent'}, is not installed`,
      )
    }
    const path = relative(sourceModules, dir)
    if (copied.has(path)) continue
    copied.add(path)
    const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as Manifest
    if (FORBIDDEN_PACKAGES.includes(manifest.name)) {
      throw new Error(`${manifest.name} would be bundled (needed at ${path}); it must not be in the agent`)
    }
    const nested = join(dir, 'node_modules')
    await cp(dir, join(targetModules, path), {
      recursive: true,
      filter: (source) => source !== nested && !source.startsWith(`${nested}${sep}`),
    })
    const peersOptional = manifest.peerDependenciesMeta ?? {}
    for (const name of Object.keys(manifest.dependencies ?? {}))
      queue.push({ name, from: dir, optional: false })
    for (const name of Object.keys(manifest.optionalDependencies ?? {}))
      queue.push({ name, from: dir, optional: true })
    for (const name of Object.keys(manifest.peerDependencies ?? {})) {
      queue.push({ name, from: dir, optional: peersOptional[name]?.optional === true })
    }
  }
  return [...copied].sort()
}

/** Node's lookup: `from`/node_modules/name, then each parent's, up to the repository's. */
async function resolvePackageDir(name: string, from: string): Promise<string | undefined> {
  for (let dir = from; ; dir = dirname(dir)) {
    if (!dir.endsWith(`${sep}node_modules`)) {
      const candidate = join(dir, 'node_modules', name)
      if (await isFile(join(candidate, 'package.json'))) return candidate
    }
    if (dir === REPO_ROOT || dirname(dir) === dir) return undefined
  }
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  )
}

async function filesUnder(dir: string, extension: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith(extension))
    .map((entry) => join(entry.parentPath, entry.name))
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = Date.now()
  const built = await buildAgentPackage({ outDir: process.argv[2] })
  const kb = Math.round(built.bytes / 1024)
  process.stdout.write(
    `${built.tarball} (${kb} KB, ${built.bundled.length} packages bundled, ${Math.round((Date.now() - started) / 1000)} s)\n` +
      `dependencies: ${Object.entries(built.dependencies)
        .map(([name, version]) => `${name}@${version}`)
        .join(', ')}\n`,
  )
}
