/**
 * The layer rules in biome.json (docs/development/architecture.md, "Agent layers" and "Cloud
 * layers") refuse an import that runs back up a layer. Each case below is a one-line module placed
 * at a path inside a copy of the configuration, and linted by the project's own Biome: the wrong
 * imports must each be refused by noRestrictedImports, and the right ones must pass, so a rule that
 * is too loose or too strict both fail here.
 */
import { execFile } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const ROOT = resolve(import.meta.dirname, '../..')
const BIOME = join(ROOT, 'node_modules/.bin/biome')

interface Case {
  /** Where the importing module sits, from the repository root. */
  at: string
  imports: string
}

/** Imports that run back up a layer or across programs. */
const WRONG: readonly Case[] = [
  { at: 'agent/spool/a.ts', imports: '../uplink/forwarder.js' },
  { at: 'agent/inputs/a.ts', imports: '../gateway.js' },
  { at: 'agent/inputs/adms/a.ts', imports: '../../status/status-server.js' },
  { at: 'agent/formats/a.ts', imports: '../intake/punch-sink.js' },
  { at: 'agent/config/a.ts', imports: '../inputs/topic-matcher.js' },
  { at: 'agent/uplink/a.ts', imports: '../../cloud/app-error.js' },
  { at: 'shared/a.ts', imports: '../agent/punch/punch-id.js' },
  { at: 'cloud/a.ts', imports: '../agent/punch/punch-id.js' },
  { at: 'cloud/features/punches/a.ts', imports: '../../plugins/errors.js' },
  { at: 'cloud/features/punches/store.ts', imports: './service.js' },
  { at: 'cloud/plugins/a.ts', imports: '../features/tenants/store.js' },
  { at: 'cloud/db/a.ts', imports: '../features/audit/service.js' },
  { at: 'cloud/http/a.ts', imports: '../plugins/errors.js' },
  { at: 'cloud/settings/a.ts', imports: '../db/database.js' },
  { at: 'cloud/config.ts', imports: './features/webhooks/dispatcher.js' },
  { at: 'cloud/console/src/a.ts', imports: '../../app-error.js' },
  { at: 'cloud/features/punches/service.ts', imports: 'kysely' },
  { at: 'cloud/features/webhooks/dispatcher.ts', imports: '../../db/executor.js' },
  { at: 'cloud/features/employees/service.ts', imports: '../../db/database.js' },
  { at: 'cloud/features/tenants/service.ts', imports: '../../stores.js' },
  { at: 'cloud/plugins/c.ts', imports: '../apis/public-api.js' },
]

/** Imports that go down a layer, or to a leaf: allowed. */
const RIGHT: readonly Case[] = [
  { at: 'agent/spool/b.ts', imports: '../punch/punch-id.js' },
  { at: 'agent/inputs/b.ts', imports: '../intake/punch-intake.js' },
  { at: 'agent/gateway.ts', imports: './uplink/forwarder.js' },
  { at: 'agent/uplink/b.ts', imports: '../../shared/punch.js' },
  { at: 'cloud/features/punches/b.ts', imports: './store.js' },
  { at: 'cloud/plugins/b.ts', imports: '../http/rate-limit.js' },
  { at: 'cloud/console/src/b.ts', imports: '../../../shared/punch.js' },
  { at: 'cloud/features/employees/store.ts', imports: 'kysely' },
  { at: 'cloud/features/webhooks/delivery-store.ts', imports: '../../db/executor.js' },
  { at: 'cloud/features/punches/ingest.ts', imports: '../../db/unit-of-work.js' },
  { at: 'cloud/apis/b.ts', imports: '../features/punches/routes.js' },
]

/** Each module's path, and the messages Biome printed for it. */
let findings: Map<string, string[]>
let dir: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hajri-layers-'))
  await copyFile(join(ROOT, 'biome.json'), join(dir, 'biome.json'))
  for (const c of [...WRONG, ...RIGHT]) {
    await mkdir(join(dir, dirname(c.at)), { recursive: true })
    await writeFile(join(dir, c.at), `import { x } from '${c.imports}'\n\nexport const y = x\n`)
  }
  const run = await promisify(execFile)(
    BIOME,
    ['lint', '--vcs-enabled=false', '--max-diagnostics=none', '.'],
    {
      cwd: dir,
    },
  ).catch((err: { stdout?: string; stderr?: string }) => ({
    stdout: err.stdout ?? '',
    stderr: err.stderr ?? '',
  }))
  findings = new Map()
  // A diagnostic starts with "path:line:column rule ━━━"; its message follows on a "×" line.
  let current: string | undefined
  for (const line of `${run.stdout}\n${run.stderr}`.split('\n')) {
    const head = /^(\S+\.ts):\d+:\d+ (\S+)/.exec(line)
    if (head) {
      current = head[1] as string
      findings.set(current, [...(findings.get(current) ?? []), head[2] as string])
    }
  }
}, 60_000)

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('the import layers are enforced by lint', () => {
  it.each(WRONG)('refuses $at importing $imports', ({ at }) => {
    expect(findings.get(at)).toContain('lint/style/noRestrictedImports')
  })

  it.each(RIGHT)('allows $at importing $imports', ({ at }) => {
    expect(findings.get(at) ?? []).not.toContain('lint/style/noRestrictedImports')
  })
})
