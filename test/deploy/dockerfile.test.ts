/**
 * deploy/Dockerfile: a multi-stage Dockerfile for the cloud that runs as a non-root user.
 * There is no Docker daemon where these tests run, so the image is never built here. What can be
 * checked without one is: the file's final stage (user, command, health check, ports, volume),
 * that every path it copies exists after `npm run build` and is not excluded by its ignore file,
 * that `npm prune --omit=dev` would keep every package the cloud imports, and that the runtime
 * stage's files alone, laid out as the image lays them out, start the cloud with the image's
 * environment and pass the image's own HEALTHCHECK command.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, posix } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { freePort, waitFor } from '../support/e2e-kit.js'
import { runTool } from '../support/tools.js'
import { copyInstruction, envPairs, execForm, type Instruction, parseDockerfile } from './parse-dockerfile.js'

const REPO = fileURLToPath(new URL('../../', import.meta.url))
const stages = parseDockerfile(readFileSync(join(REPO, 'deploy/Dockerfile'), 'utf8'))
const build = stages.find((stage) => stage.name === 'build')
const runtime = stages.at(-1)
const ignoreFile = readFileSync(join(REPO, 'deploy/Dockerfile.dockerignore'), 'utf8')
const ignorePatterns = ignoreFile
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'))

function instructions(stage: typeof runtime, keyword: string): Instruction[] {
  return stage?.instructions.filter((i) => i.keyword === keyword) ?? []
}

function last(stage: typeof runtime, keyword: string): string {
  const found = instructions(stage, keyword).at(-1)
  if (!found) throw new Error(`no ${keyword} in the stage`)
  return found.args
}

/** The image's environment: every ENV of the final stage. */
function imageEnv(): Record<string, string> {
  return Object.assign({}, ...instructions(runtime, 'ENV').map((i) => envPairs(i.args)))
}

/** A .dockerignore pattern as a regular expression over context-relative paths. */
function ignoreRegExp(pattern: string): RegExp {
  const source = pattern
    .replace(/^\//, '')
    .split(/(\*\*\/|\*|\?)/)
    .map((part) => {
      if (part === '**/') return '(?:.*/)?'
      if (part === '*') return '[^/]*'
      if (part === '?') return '[^/]'
      return part.replace(/[.+^${}()|[\]\\]/g, '\\$&')
    })
    .join('')
  // A pattern that names a directory excludes everything in it.
  return new RegExp(`^${source}(?:/.*)?$`)
}

function ignored(path: string): string | undefined {
  return ignorePatterns.find((pattern) => ignoreRegExp(pattern).test(path))
}

/** The build stage's working directory: where `npm run build` leaves its output, in the repository here. */
function buildWorkdir(): string {
  return last(build, 'WORKDIR')
}

describe('deploy/Dockerfile, read without a Docker daemon (the image is not built here)', () => {
  it('builds in one stage and runs from another, both on the Node 20 Debian slim image', () => {
    expect(stages.map((s) => s.base)).toEqual(['node:20-bookworm-slim', 'node:20-bookworm-slim'])
    expect(build).toBeDefined()
    const runs = instructions(build, 'RUN').map((i) => i.args)
    const all = runs.join('\n')
    // better-sqlite3 is compiled from source: node-gyp needs python3, make and a C++ compiler.
    const installed = runs.find((run) => run.includes('apt-get install'))?.split(/\s+/) ?? []
    expect(installed).toEqual(expect.arrayContaining(['python3', 'make', 'g++']))
    const steps = ['npm ci', 'npm rebuild better-sqlite3', 'npm run build', 'npm prune --omit=dev']
    const positions = steps.map((step) => all.indexOf(step))
    expect(positions.every((p) => p >= 0)).toBe(true)
    expect([...positions].sort((a, b) => a - b)).toEqual(positions)
  })

  it('runs its final stage as a numeric, non-root user', () => {
    const users = instructions(runtime, 'USER')
    expect(users.length).toBeGreaterThan(0)
    const user = users.at(-1) as Instruction
    const match = /^(\d+)(?::(\d+))?$/.exec(user.args)
    expect(match, `USER ${user.args} should be a uid[:gid]`).not.toBeNull()
    expect(Number(match?.[1])).toBeGreaterThan(0)
    expect(Number(match?.[2] ?? 1)).toBeGreaterThan(0)
    // USER applies to what follows it: the command must come after the last one.
    const cmd = instructions(runtime, 'CMD').at(-1) as Instruction
    expect(cmd.line).toBeGreaterThan(user.line)
    // The volume belongs to that user, or the SQLite mode could not write its database.
    const setup = instructions(runtime, 'RUN')
      .map((i) => i.args)
      .join('\n')
    expect(setup).toMatch(new RegExp(`--uid ${match?.[1]}\\b`))
    expect(setup).toMatch(/chown \S+ \/data/)
  })

  it('runs `node dist/cloud/cli.js serve` under tini, on 0.0.0.0:8080, with SQLite data in /data', () => {
    expect(execForm(last(runtime, 'CMD'))).toEqual(['node', 'dist/cloud/cli.js', 'serve'])
    expect(execForm(last(runtime, 'ENTRYPOINT'))).toEqual(['/usr/bin/tini', '--'])
    const env = imageEnv()
    expect(env.HAJRI_HOST).toBe('0.0.0.0')
    expect(last(runtime, 'EXPOSE')).toBe(env.HAJRI_PORT ?? '8080')
    expect(env.HAJRI_DATABASE_URL).toBe('sqlite:/data/hajri.db')
    expect(execForm(last(runtime, 'VOLUME'))).toEqual(['/data'])
  })

  it("checks its health with node (the slim image has no curl) on the cloud's liveness route", () => {
    const healthcheck = last(runtime, 'HEALTHCHECK')
    const cmd = /(?:^|\s)CMD\s+(\[.*\])$/.exec(healthcheck)
    expect(cmd, 'HEALTHCHECK ... CMD [exec form]').not.toBeNull()
    const [program, ...args] = execForm(cmd?.[1] as string)
    expect(program).toBe('node')
    const path = /'(\/[a-z]+)'/.exec(args.join(' '))?.[1]
    expect(path).toBe('/healthz')
    expect(readFileSync(join(REPO, 'cloud/features/health/routes.ts'), 'utf8')).toContain(`'${path}'`)
    expect(healthcheck).toMatch(/--start-period=\d+s/)
  })

  it('copies into the runtime stage only the build output, the production node_modules and package.json', () => {
    const copies = instructions(runtime, 'COPY').map((i) => copyInstruction(i.args))
    for (const copy of copies)
      expect(copy.from, 'the runtime stage copies from the build stage only').toBe('build')
    const fromApp = copies.flatMap((c) => c.sources).filter((s) => s.startsWith(`${buildWorkdir()}/`))
    expect(fromApp.map((s) => posix.relative(buildWorkdir(), s)).sort()).toEqual([
      'dist',
      'node_modules',
      'package.json',
    ])
    // The only other file: tini, from the build stage's Debian package.
    expect(copies.flatMap((c) => c.sources).filter((s) => !fromApp.includes(s))).toEqual(['/usr/bin/tini'])
  })

  it('copies from the context only paths that exist and that its ignore file keeps', () => {
    const copies = instructions(build, 'COPY').map((i) => copyInstruction(i.args))
    const sources = copies.filter((c) => c.from === undefined).flatMap((c) => c.sources)
    expect(sources).toEqual(
      expect.arrayContaining(['package.json', 'package-lock.json', 'tsconfig.build.json', 'cloud', 'shared']),
    )
    for (const source of sources) {
      expect(existsSync(join(REPO, source)), source).toBe(true)
      expect(ignored(source), `${source} is excluded by the ignore file`).toBeUndefined()
    }
    // The console's build configuration lives inside cloud/: it must not be excluded either.
    expect(ignored('cloud/console/vite.config.ts')).toBeUndefined()
  })

  it('keeps build output, local data, logs, secrets and git history out of the build context', () => {
    for (const path of [
      'node_modules',
      'dist',
      'data',
      'bench/results',
      '.git',
      'test-results',
      'server.log',
    ]) {
      expect(ignored(path), path).toBeDefined()
    }
    for (const path of [
      'node_modules/kysely/package.json',
      'agent/node_modules/x',
      'deploy/.env',
      'logs/a.log',
    ]) {
      expect(ignored(path), path).toBeDefined()
    }
  })

  it('leaves after `npm prune --omit=dev` every package the built code imports', () => {
    // A package the cloud imports but package.json lists under devDependencies would be pruned from
    // the image, and the container would fail at start: this is the check the image build can't make here.
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>
    }
    const builtins = new Set(builtinModules)
    const imported = new Map<string, string>()
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name)
        if (entry.isDirectory()) walk(path)
        else if (entry.name.endsWith('.js')) {
          const code = readFileSync(path, 'utf8')
          const specifiers = [
            ...code.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"]([^'"]+)['"]/g),
            ...code.matchAll(/(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g),
            ...code.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g),
          ].map((m) => m[1] as string)
          for (const specifier of specifiers) {
            if (specifier.startsWith('.') || specifier.startsWith('node:')) continue
            const name = specifier.startsWith('@')
              ? specifier.split('/').slice(0, 2).join('/')
              : (specifier.split('/')[0] as string)
            if (!builtins.has(name)) imported.set(name, path.slice(REPO.length))
          }
        }
      }
    }
    for (const dir of ['dist/cloud', 'dist/shared', 'dist/agent']) {
      expect(existsSync(join(REPO, dir)), `${dir} (run npm run build)`).toBe(true)
      walk(join(REPO, dir))
    }
    expect(imported.size).toBeGreaterThan(10)
    const missing = [...imported].filter(([name]) => !(name in pkg.dependencies))
    expect(missing, 'imported by the built code but not a production dependency').toEqual([])
  })
})

describe('the runtime stage, laid out as in the image and run with its environment', () => {
  const root = mkdtempSync(join(tmpdir(), 'hajri-image-'))
  let server: ChildProcess | undefined
  afterAll(() => {
    server?.kill('SIGKILL')
    rmSync(root, { recursive: true, force: true })
  })

  it("starts with the image's CMD and passes its HEALTHCHECK, which fails once the cloud is stopped", async () => {
    // The image's WORKDIR is this temporary directory; its /data volume is a directory in it.
    const workdir = join(root, 'app')
    const dataDir = join(root, 'data')
    expect(last(runtime, 'WORKDIR')).toBe('/app')
    for (const copy of instructions(runtime, 'COPY').map((i) => copyInstruction(i.args))) {
      for (const source of copy.sources) {
        if (!source.startsWith(`${buildWorkdir()}/`)) continue // tini: from Debian, not from the build
        const built = join(REPO, posix.relative(buildWorkdir(), source))
        expect(existsSync(built), `${source}: ${built} should exist after npm run build`).toBe(true)
        const target = join(workdir, posix.relative('.', copy.destination))
        if (source.endsWith('/node_modules')) {
          // The repository's node_modules, devDependencies included: npm can't prune a copy here.
          // The previous test checks that the pruned one keeps what the built code imports.
          symlinkSync(built, target, 'dir')
        } else {
          cpSync(built, target, { recursive: true })
        }
      }
    }
    expect(readdirSync(workdir).sort()).toEqual(['dist', 'node_modules', 'package.json'])

    const port = await freePort()
    const image = imageEnv()
    const env: NodeJS.ProcessEnv = {
      PATH: dirname(process.execPath),
      ...image,
      // The image's /data volume, this test's free port, and loopback: 0.0.0.0 is for a
      // container's own network, not to open this machine to its network during a test.
      HAJRI_DATABASE_URL: (image.HAJRI_DATABASE_URL as string).replace('sqlite:/data/', `sqlite:${dataDir}/`),
      HAJRI_PORT: String(port),
      HAJRI_HOST: '127.0.0.1',
      HAJRI_LOG_LEVEL: 'warn',
    }
    const [program, ...args] = execForm(last(runtime, 'CMD'))
    expect(program).toBe('node')
    const output: string[] = []
    const child = spawn(process.execPath, args, { cwd: workdir, env, stdio: ['ignore', 'pipe', 'pipe'] })
    server = child
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()))

    const healthcheck = execForm(/CMD\s+(\[.*\])$/.exec(last(runtime, 'HEALTHCHECK'))?.[1] as string)
    const probe = () =>
      runTool(process.execPath, healthcheck.slice(1), { cwd: workdir, env, timeoutMs: 10_000 })
    await waitFor(
      async () => {
        if (child.exitCode !== null)
          throw new Error(`the cloud exited (${child.exitCode}):\n${output.join('')}`)
        return (await probe()).code === 0
      },
      'the HEALTHCHECK command to succeed',
      { timeoutMs: 60_000, intervalMs: 200, describe: () => output.join('') },
    )
    // Ready (the database in the /data volume answers), and the console found in dist/console.
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200)
    const page = await fetch(`http://127.0.0.1:${port}/console`)
    expect(page.status).toBe(200)
    expect(await page.text()).toMatch(/<script type="module"[^>]* src="\/console\/assets\//)
    expect(existsSync(join(dataDir, 'hajri.db'))).toBe(true)

    // docker stop: SIGTERM (tini passes it on), and the cloud exits cleanly.
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    const [code] = await exited
    expect(code, output.join('')).toBe(0)
    const after = await probe()
    expect(after.code).not.toBe(0)
  }, 120_000)
})
