/**
 * deploy/compose.yaml (docs/decisions/0060-caddy-and-tini.md): PostgreSQL, Redis, two cloud instances and a
 * reverse proxy; `docker compose config` validates it where that tool exists. The file's structure is checked
 * by reading it with the `yaml` package, everywhere; Docker Compose itself (the v2 plugin, or docker-compose
 * 1.29 from Debian) validates it against the Compose schema and resolves its variables, where it is
 * installed. Nothing is started: that needs a daemon.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { composeAvailability, runTool } from '../support/tools.js'
import { parseDockerfile } from './parse-dockerfile.js'

const REPO = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '')
const COMPOSE_PATH = join(REPO, 'deploy/compose.yaml')
const composeText = readFileSync(COMPOSE_PATH, 'utf8')

interface Service {
  image?: string
  build?: { context: string; dockerfile: string }
  ports?: unknown[]
  environment?: Record<string, string>
  depends_on?: Record<string, { condition: string }> | string[]
  healthcheck?: { test: string[] | string }
  volumes?: string[]
  networks?: string[] | Record<string, unknown>
  network_mode?: string
}

interface ComposeFile {
  services: Record<string, Service>
  volumes?: Record<string, unknown>
  networks?: Record<string, { internal?: boolean } | null>
  [extension: `x-${string}`]: unknown
}

// `<<: *cloud` is a YAML 1.1 merge key, which Compose supports and the yaml package only on request.
const file = parse(composeText, { merge: true }) as ComposeFile
const services = file.services
const clouds = Object.keys(services).filter(
  (name) => services[name]?.build?.dockerfile === 'deploy/Dockerfile',
)
const PROXY = 'caddy'

function service(name: string): Service {
  const found = services[name]
  if (!found) throw new Error(`no service ${name} in deploy/compose.yaml`)
  return found
}

function env(name: string): Record<string, string> {
  return service(name).environment ?? {}
}

function networksOf(name: string): string[] {
  const networks = service(name).networks
  if (networks === undefined) return ['default']
  return Array.isArray(networks) ? networks : Object.keys(networks)
}

/** The port the image listens on: its EXPOSE. */
function imagePort(): string {
  const runtime = parseDockerfile(readFileSync(join(REPO, 'deploy/Dockerfile'), 'utf8')).at(-1)
  const expose = runtime?.instructions.filter((i) => i.keyword === 'EXPOSE').at(-1)
  if (!expose) throw new Error('deploy/Dockerfile has no EXPOSE')
  return expose.args
}

describe('deploy/compose.yaml, as written', () => {
  it('has PostgreSQL 16 on a named volume and Redis 7, each with a health check', () => {
    expect(service('postgres').image).toBe('postgres:16')
    expect(service('redis').image).toBe('redis:7')
    for (const name of ['postgres', 'redis']) expect(service(name).healthcheck?.test, name).toBeDefined()
    const data = service('postgres').volumes?.find((v) => v.split(':')[1] === '/var/lib/postgresql/data')
    expect(data, 'a volume on /var/lib/postgresql/data').toBeDefined()
    expect(Object.keys(file.volumes ?? {})).toContain(data?.split(':')[0])
  })

  it('runs two cloud instances built from deploy/Dockerfile with the repository root as context, from one definition', () => {
    expect(clouds.sort()).toEqual(['cloud-1', 'cloud-2'])
    for (const name of clouds) {
      expect(resolve(dirname(COMPOSE_PATH), service(name).build?.context as string), name).toBe(REPO)
    }
    // One YAML anchor: the instances are the same definition, so they cannot drift apart.
    expect(service('cloud-1')).toEqual(file['x-cloud'])
    expect(service('cloud-2')).toEqual(service('cloud-1'))
    expect(composeText).toMatch(/^x-cloud: &cloud$/m)
  })

  it('starts the instances once PostgreSQL and Redis are healthy', () => {
    for (const name of clouds) {
      expect(service(name).depends_on).toEqual({
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
      })
    }
  })

  it('points every instance at the PostgreSQL and Redis services, with one secret key from outside the file', () => {
    for (const name of clouds) {
      const database = new URL(env(name).HAJRI_DATABASE_URL as string)
      expect(database.protocol).toBe('postgres:')
      expect(database.hostname).toBe('postgres')
      expect(database.password, 'no password in the file').toBe('')
      const redis = new URL(env(name).HAJRI_REDIS_URL as string)
      expect(redis.protocol).toBe('redis:')
      expect(redis.hostname).toBe('redis')
      // Interpolated from deploy/.env, required, never a value written here.
      expect(env(name).HAJRI_SECRET_KEY).toMatch(/^\$\{HAJRI_SECRET_KEY:\?[^}]+\}$/)
      expect(env(name).PGPASSWORD).toBe(env('postgres').POSTGRES_PASSWORD)
      expect(env(name).PGPASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?[^}]+\}$/)
    }
    expect(env('cloud-1').HAJRI_SECRET_KEY).toBe(env('cloud-2').HAJRI_SECRET_KEY)
  })

  it('sets for the instances only HAJRI_ variables that the cloud reads', () => {
    const config = readFileSync(join(REPO, 'cloud/config.ts'), 'utf8')
    const names = Object.keys(env('cloud-1')).filter((name) => name.startsWith('HAJRI_'))
    expect(names.length).toBeGreaterThan(5)
    for (const name of names)
      expect(config, `${name} is not read by cloud/config.ts`).toMatch(new RegExp(`\\b${name}\\b`))
  })

  it('publishes ports on the proxy alone: 80 and 443', () => {
    for (const [name, definition] of Object.entries(services)) {
      expect(definition.network_mode, name).toBeUndefined()
      if (name !== PROXY) expect(definition.ports, `${name} publishes ports`).toBeUndefined()
    }
    expect(service(PROXY).ports).toEqual(expect.arrayContaining(['80:80', '443:443']))
    expect(service(PROXY).image).toBe('caddy:2')
  })

  it('keeps PostgreSQL and Redis on an internal network shared with the instances only', () => {
    for (const store of ['postgres', 'redis']) {
      const networks = networksOf(store)
      for (const network of networks) {
        expect(file.networks?.[network]?.internal, `${store} on ${network}`).toBe(true)
        expect(networksOf(PROXY)).not.toContain(network)
      }
      for (const name of clouds) expect(networksOf(name)).toEqual(expect.arrayContaining(networks))
    }
    // The instances and the proxy meet on a network that is not internal: webhooks go out through it.
    const shared = networksOf(PROXY).filter((n) => clouds.every((c) => networksOf(c).includes(n)))
    expect(shared.length).toBeGreaterThan(0)
    for (const network of shared) expect(file.networks?.[network]?.internal).not.toBe(true)
  })

  it('has the proxy balance over every instance on the image port, check /readyz, and trust one hop', () => {
    const caddyfile = readFileSync(join(REPO, 'deploy/Caddyfile'), 'utf8')
    expect(service(PROXY).volumes).toContain('./Caddyfile:/etc/caddy/Caddyfile:ro')
    const upstreams = /^\s*reverse_proxy\s+([^{\n]+?)\s*\{/m.exec(caddyfile)?.[1]?.split(/\s+/)
    expect(upstreams).toEqual(clouds.map((name) => `${name}:${imagePort()}`))
    const healthUri = /^\s*health_uri\s+(\S+)/m.exec(caddyfile)?.[1]
    expect(healthUri).toBe('/readyz')
    expect(readFileSync(join(REPO, 'cloud/features/health/routes.ts'), 'utf8')).toContain(`'${healthUri}'`)
    expect(caddyfile).toMatch(/^\s*header Strict-Transport-Security "max-age=\d+/m)
    // Caddy replaces a client's X-Forwarded-For with the address it saw: exactly one trusted hop.
    for (const name of clouds) expect(env(name).HAJRI_TRUST_PROXY).toBe('1')
  })

  it('names in compose.env.example every variable it takes from the environment', () => {
    const example = readFileSync(join(REPO, 'deploy/compose.env.example'), 'utf8')
    const code = composeText
      .split('\n')
      .filter((line) => !line.trimStart().startsWith('#'))
      .join('\n')
    const variables = new Set([...code.matchAll(/\$\{([A-Z_][A-Z0-9_]*)/g)].map((m) => m[1] as string))
    expect([...variables].sort()).toEqual([
      'HAJRI_DOMAIN',
      'HAJRI_LOG_LEVEL',
      'HAJRI_SECRET_KEY',
      'POSTGRES_PASSWORD',
    ])
    for (const name of variables) expect(example).toMatch(new RegExp(`^(# )?${name}=`, 'm'))
    // The example holds no secret: the required ones are left empty.
    expect(example).toMatch(/^POSTGRES_PASSWORD=$/m)
    expect(example).toMatch(/^HAJRI_SECRET_KEY=$/m)
  })
})

const compose = await composeAvailability()

describe.skipIf(compose.skipReason !== undefined)(
  `docker compose config${compose.skipReason ? ` (skipped: ${compose.skipReason})` : ` (${compose.tool?.version})`}`,
  () => {
    const scratch = mkdtempSync(join(tmpdir(), 'hajri-compose-'))
    afterAll(() => rmSync(scratch, { recursive: true, force: true }))

    /** Runs `config` with only this env file: the caller's environment and any deploy/.env stay out. */
    function config(envFile: string) {
      const tool = compose.tool as NonNullable<typeof compose.tool>
      const childEnv = Object.fromEntries(
        Object.entries(process.env).filter(
          ([name]) =>
            !name.startsWith('COMPOSE_') &&
            !['POSTGRES_PASSWORD', 'HAJRI_SECRET_KEY', 'HAJRI_DOMAIN', 'HAJRI_LOG_LEVEL'].includes(name),
        ),
      )
      const path = join(scratch, envFile)
      return runTool(tool.command, [...tool.args, '-f', COMPOSE_PATH, '--env-file', path, 'config'], {
        cwd: scratch,
        env: childEnv,
      })
    }

    it('accepts the file, and gives both instances the same key and the database password', async () => {
      const secrets = {
        POSTGRES_PASSWORD: `p@ss:/${randomBytes(9).toString('base64url')}`,
        HAJRI_SECRET_KEY: randomBytes(32).toString('base64'),
        HAJRI_DOMAIN: 'hajri.test.example',
      }
      writeFileSync(
        join(scratch, 'good.env'),
        Object.entries(secrets)
          .map(([name, value]) => `${name}=${value}\n`)
          .join(''),
      )
      const run = await config('good.env')
      expect(run.code, run.stderr).toBe(0)
      const resolved = parse(run.stdout) as ComposeFile
      expect(Object.keys(resolved.services).sort()).toEqual([
        'caddy',
        'cloud-1',
        'cloud-2',
        'postgres',
        'redis',
      ])
      for (const name of ['cloud-1', 'cloud-2']) {
        const environment = resolved.services[name]?.environment ?? {}
        expect(environment.HAJRI_SECRET_KEY).toBe(secrets.HAJRI_SECRET_KEY)
        expect(environment.PGPASSWORD).toBe(secrets.POSTGRES_PASSWORD)
        expect(environment.HAJRI_PUBLIC_URL).toBe(`https://${secrets.HAJRI_DOMAIN}`)
        expect(environment.HAJRI_LOG_LEVEL).toBe('info')
        expect(resolved.services[name]?.build?.context).toBe(REPO)
      }
      expect(resolved.services.postgres?.environment?.POSTGRES_PASSWORD).toBe(secrets.POSTGRES_PASSWORD)
    })

    it('refuses the file without the secrets: no password or key has a default', async () => {
      writeFileSync(join(scratch, 'empty.env'), '# nothing\n')
      const run = await config('empty.env')
      expect(run.code).not.toBe(0)
      expect(`${run.stdout}${run.stderr}`).toMatch(
        /set (POSTGRES_PASSWORD|HAJRI_SECRET_KEY|HAJRI_DOMAIN) in deploy\/\.env/,
      )
    })

    it('rejects what the Compose schema does not allow, so acceptance above means something', async () => {
      // The same file with one misspelt key: config must fail, naming it.
      const broken = join(scratch, 'compose.yaml')
      writeFileSync(broken, composeText.replace('stop_grace_period:', 'stop_grace_perod:'))
      writeFileSync(
        join(scratch, 'good-for-broken.env'),
        `POSTGRES_PASSWORD=x\nHAJRI_SECRET_KEY=${randomBytes(32).toString('base64')}\nHAJRI_DOMAIN=localhost\n`,
      )
      const tool = compose.tool as NonNullable<typeof compose.tool>
      const run = await runTool(
        tool.command,
        [...tool.args, '-f', broken, '--env-file', join(scratch, 'good-for-broken.env'), 'config'],
        { cwd: scratch },
      )
      expect(run.code).not.toBe(0)
      expect(run.stderr).toContain('stop_grace_perod')
    })
  },
)
