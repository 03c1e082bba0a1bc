/**
 * A PostgreSQL cluster of the test's own (the chaos test's "PostgreSQL restarted under load"): made with
 * initdb in a temporary directory, run with pg_ctl on a free port, restarted as the test says, and
 * removed at the end. The machine's shared PostgreSQL, which other tests use at the same time, is
 * never touched. The binaries come from HAJRI_TEST_PG_BIN, or the newest
 * /usr/lib/postgresql/<version>/bin (Debian, Ubuntu). PostgreSQL refuses to run as root: as root,
 * every command runs as the `postgres` user (`runuser -u postgres --`), in a directory it owns.
 */
import { execFile, execFileSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { chown, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../support/e2e-kit.js'
import { REQUIRE_ALL } from '../../support/services.js'

const PG_BIN_ENV = 'HAJRI_TEST_PG_BIN'

/** Where initdb and pg_ctl are, or why they cannot be used. */
export function findPostgresBinaries(): { bin: string } | { skipReason: string } {
  const fromEnv = process.env[PG_BIN_ENV]
  const candidates = fromEnv
    ? [fromEnv]
    : listVersions('/usr/lib/postgresql').map((v) => join('/usr/lib/postgresql', v, 'bin'))
  const bin = candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')))
  if (!bin) {
    const where = fromEnv ?? '/usr/lib/postgresql/<version>/bin'
    return {
      skipReason: `PostgreSQL server binaries (initdb, pg_ctl) not found in ${where}; set ${PG_BIN_ENV}`,
    }
  }
  if (process.getuid?.() === 0 && !userExists('postgres'))
    return { skipReason: 'running as root and there is no `postgres` user to run PostgreSQL as' }
  return { bin }
}

/** Like the availability checks of test/support/services.ts: a reason to skip, or a failure in CI. */
export function privatePostgresAvailability(): { bin: string | undefined; skipReason: string | undefined } {
  const found = findPostgresBinaries()
  if ('bin' in found) return { bin: found.bin, skipReason: undefined }
  if (REQUIRE_ALL) throw new Error(`HAJRI_TEST_REQUIRE_ALL=1 but ${found.skipReason}`)
  console.warn(`skipping private PostgreSQL tests: ${found.skipReason}`)
  return { bin: undefined, skipReason: found.skipReason }
}

function listVersions(root: string): string[] {
  try {
    return readdirSync(root)
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a))
  } catch {
    return []
  }
}

function userExists(name: string): boolean {
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Every cluster started in this process, stopped on exit whatever happened to the test. */
const running = new Set<PrivatePostgres>()
process.once('exit', () => {
  for (const cluster of running) cluster.stopNowSync()
})

export class PrivatePostgres {
  private dir = ''
  private port = 0
  private readonly asPostgres = process.getuid?.() === 0
  /** Restarts made, by mode. */
  readonly restarts = { fast: 0, immediate: 0 }

  constructor(private readonly bin: string) {}

  /** A URL for the `postgres` database as the `postgres` superuser (trust, on 127.0.0.1 only). */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`
  }

  private get dataDir(): string {
    return join(this.dir, 'data')
  }

  /** initdb, then start on a free port, listening on 127.0.0.1 and a socket in its own directory. */
  async start(): Promise<void> {
    this.dir = await mkdtemp(join(tmpdir(), 'hajri-chaos-pg-'))
    await mkdir(join(this.dir, 'socket'))
    if (this.asPostgres) {
      const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim())
      const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim())
      await chown(this.dir, uid, gid)
      await chown(join(this.dir, 'socket'), uid, gid)
    }
    // --no-sync: initdb's own files need not survive a power cut; the server fsyncs as usual.
    await this.run('initdb', [
      '-D',
      this.dataDir,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ])
    this.port = await freePort()
    running.add(this)
    await this.pgCtl(['start'])
  }

  /**
   * `pg_ctl restart -m fast` (sessions are ended, a clean shutdown) or `-m immediate` (no shutdown
   * at all: the server starts again by crash recovery from the WAL). Resolves once it accepts
   * connections again.
   */
  async restart(mode: 'fast' | 'immediate'): Promise<void> {
    await this.pgCtl(['restart', '-m', mode])
    this.restarts[mode]++
  }

  /** Stops the server and removes its directory. */
  async stop(): Promise<void> {
    if (!this.dir) return
    if (running.has(this)) {
      await this.run('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']).catch(() => {})
      running.delete(this)
    }
    await rm(this.dir, { recursive: true, force: true })
    this.dir = ''
  }

  /** The server's log, for a failure's report. */
  async log(): Promise<string> {
    return readFile(join(this.dir, 'postgres.log'), 'utf8').catch(() => '')
  }

  /** At process exit, nothing asynchronous runs any more. */
  stopNowSync(): void {
    try {
      const [command, args] = this.command('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', 'stop'])
      execFileSync(command, args, { stdio: 'ignore', timeout: 10_000 })
    } catch {
      // Already stopped, or gone with its directory.
    }
  }

  private pgCtl(action: string[]): Promise<string> {
    const options = [
      `-p ${this.port}`,
      '-c listen_addresses=127.0.0.1',
      `-c unix_socket_directories=${join(this.dir, 'socket')}`,
      '-c max_connections=60',
      '-c shared_buffers=32MB',
      // fsync stays on (the default): `-m immediate` is a crash, recovered from the WAL like one.
    ].join(' ')
    return this.run('pg_ctl', [
      '-D',
      this.dataDir,
      '-l',
      join(this.dir, 'postgres.log'),
      '-o',
      options,
      '-w',
      '-t',
      '120',
      ...action,
    ])
  }

  private command(name: string, args: string[]): [string, string[]] {
    const path = join(this.bin, name)
    return this.asPostgres ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args]
  }

  private run(name: string, args: string[]): Promise<string> {
    const [command, commandArgs] = this.command(name, args)
    return new Promise((resolve, reject) => {
      execFile(command, commandArgs, { cwd: this.dir, timeout: 180_000 }, (err, stdout, stderr) => {
        if (err) reject(new Error(`${name} ${args.join(' ')} failed: ${err.message}\n${stdout}${stderr}`))
        else resolve(stdout)
      })
    })
  }
}
