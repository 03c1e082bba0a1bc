// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${NAME} references are among the generated values.
/**
 * Fuzzing: agent config files. load.fuzz.test.ts mutates the example; this feeds the
 * loader what else a site PC can hold: files of any bytes (not UTF-8, NUL, a megabyte, nesting
 * thousands deep, alias bombs), whole documents assembled from right and wrong settings, any
 * environment values behind ${NAME}, and `...File` secrets that are empty, binary, too big, a
 * directory, a dangling or looping link, or a FIFO. For every input the loader answers within a
 * bound with either a configuration or a ConfigFileError listing problems with paths and messages,
 * never another exception, and never a message holding a secret. A configuration it returns is
 * one the agent can be built from: the intake, every input and the HTTP client construct from it.
 * Reproduce a failure with HAJRI_FUZZ_SEED=<seed printed by fast-check>.
 */
import { execFileSync } from 'node:child_process'
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { isAbsolute, join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stringify } from 'yaml'
import { ConfigFileError } from '../../../agent/config/config-file-error.js'
import { loadAgentConfig } from '../../../agent/config/load.js'
import type { AgentConfig } from '../../../agent/config/schema.js'
import { EventBus } from '../../../agent/events.js'
import { createInputs } from '../../../agent/inputs/create-inputs.js'
import { PunchIntake } from '../../../agent/intake/punch-intake.js'
import type { PunchSink } from '../../../agent/intake/punch-sink.js'
import { createHttpClient } from '../../../agent/uplink/http-client.js'
import { silentLog } from '../inputs/serial-test-kit.js'
import { configDocumentArbitrary } from './config-document-arbitrary.js'
import { ConfigDir, EXAMPLE_ENV, exampleInto } from './config-fixture.js'

const SEED = process.env.HAJRI_FUZZ_SEED === undefined ? undefined : Number(process.env.HAJRI_FUZZ_SEED)
const RUNS = (numRuns: number) => ({ numRuns, ...(SEED === undefined ? {} : { seed: SEED }) })
/** A loader that takes longer than this on one file is stuck (a parser loop, an alias bomb). */
const LOAD_TIMEOUT_MS = 15_000
/** Secrets carry this mark, so a message that repeats one is found. */
const MARK = 'Zq9SeKrEt'

const log = silentLog()
const noSink: PunchSink = {
  accept: async () => ({ records: 0, spooled: 0, resent: 0, deadLettered: 0 }),
  rejectFrame: async () => {},
}

/** The agent's parts, built from a configuration as the gateway builds them (constructors only, no I/O). */
function expectBuildable(config: AgentConfig): void {
  expect(isAbsolute(config.spool.dir), config.spool.dir).toBe(true)
  expect(Number.isSafeInteger(config.spool.maxBytes) && config.spool.maxBytes > 0).toBe(true)
  expect(config.cloud.clientSecret.length).toBeGreaterThan(0)
  const events = new EventBus(log)
  const sink = new PunchIntake({
    config,
    spool: { append: async () => {} },
    deadLetters: { add: async () => {} },
    events,
    log,
  })
  expect(sink).toBeDefined()
  const inputs = createInputs({ config, sink: noSink, events, log })
  expect(inputs.length).toBeGreaterThanOrEqual(config.devices.some((d) => d.serial) ? 1 : 0)
  createHttpClient(config.cloud).close()
  expect(/^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):\d+$/.test(config.status.listen), config.status.listen).toBe(true)
}

function withTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer in ${LOAD_TIMEOUT_MS} ms: ${what}`)),
      LOAD_TIMEOUT_MS,
    )
  })
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer))
}

/** Loads `path`: a configuration the agent can be built from, or a ConfigFileError that explains. */
async function expectLoadsOrExplains(path: string, env: NodeJS.ProcessEnv, secrets: string[] = []) {
  let config: AgentConfig
  try {
    config = await withTimeout(loadAgentConfig(path, env), path)
  } catch (err) {
    if (!(err instanceof ConfigFileError)) throw err
    expect(err.problems.length).toBeGreaterThan(0)
    for (const problem of err.problems) {
      expect(typeof problem.path === 'string' && problem.path.length > 0, JSON.stringify(problem)).toBe(true)
      expect(typeof problem.message === 'string' && problem.message.length > 0, JSON.stringify(problem)).toBe(
        true,
      )
    }
    for (const secret of secrets)
      expect(err.message.includes(secret), `a message repeats a secret: ${err.message}`).toBe(false)
    return { loaded: false as const }
  }
  expectBuildable(config)
  return { loaded: true as const, config }
}

let files: ConfigDir
let exampleText: string
beforeAll(async () => {
  files = await ConfigDir.create()
  exampleText = await readFile(await exampleInto(files), 'utf8')
})
afterAll(async () => {
  await files?.remove()
})

describe('loadAgentConfig on any file', () => {
  it('explains files of any bytes, and text that is not YAML', async () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 2000 }).map((b) => Buffer.from(b)),
      fc.string({ unit: 'binary', maxLength: 500 }).map((s) => Buffer.from(s)),
      fc
        .array(
          fc.constantFrom(
            'site:',
            ' id: x',
            '\n',
            '  ',
            '- ',
            ': ',
            '{',
            '}',
            '[',
            ']',
            '&a',
            '*a',
            '!!str',
            '%YAML 1.1',
            '---',
            '\ufeff',
            '\u0000',
            '\t',
          ),
          { maxLength: 80 },
        )
        .map((parts) => Buffer.from(parts.join(''))),
      // The example in another encoding, or cut inside a multi-byte character.
      fc.constant(Buffer.from(exampleText, 'utf16le')),
      fc.nat({ max: exampleText.length }).map((n) => Buffer.from(`${exampleText.slice(0, n)}\xe9`, 'latin1')),
    )
    await fc.assert(
      fc.asyncProperty(bytes, async (content) => {
        await expectLoadsOrExplains(await files.write('bytes.yaml', content), EXAMPLE_ENV)
      }),
      RUNS(300),
    )
  })

  it('explains nesting thousands deep, alias bombs, a megabyte and more than a megabyte', async () => {
    const deep = (n: number) => `site: ${'['.repeat(n)}${']'.repeat(n)}\n`
    const deepMap = (n: number) => `site: ${'{a: '.repeat(n)}1${'}'.repeat(n)}\n`
    const block = (n: number) => Array.from({ length: n }, (_, i) => `${' '.repeat(i)}a:`).join('\n')
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]']
    for (let i = 1; i < 9; i++)
      bomb.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(', ')}]`,
      )
    const inputs: [string, string][] = [
      ['flow sequences 10,000 deep', deep(10_000)],
      ['flow sequences 100,000 deep', deep(100_000)],
      ['flow mappings 20,000 deep', deepMap(20_000)],
      ['block mappings 3,000 deep', block(3_000)],
      ['a billion laughs', `${bomb.join('\n')}\n`],
      ['an alias of itself', 'site: &s\n  id: *s\n'],
      ['a megabyte of comment', `${'#'.repeat(1024 * 1024 - 1)}\n`],
      ['a megabyte and one byte', `${'#'.repeat(1024 * 1024)}\n`],
      ['a key a megabyte long', `${'k'.repeat(1000 * 1000)}: 1\n`],
      ['ten thousand devices', `devices:\n${'  - id: d\n'.repeat(10_000)}`],
    ]
    for (const [what, text] of inputs) {
      const result = await expectLoadsOrExplains(await files.write('big.yaml', text), EXAMPLE_ENV).catch(
        (err: Error) => {
          throw new Error(`${what}: ${err.message}`)
        },
      )
      expect(result.loaded, what).toBe(false)
    }
  }, 120_000)

  it('explains a path that is a directory, a FIFO, a device, a dangling or looping link', async () => {
    const dir = join(files.dir, 'odd')
    await mkdir(dir, { recursive: true })
    execFileSync('mkfifo', [join(dir, 'fifo')])
    await symlink(join(dir, 'nowhere'), join(dir, 'dangling'))
    await symlink(join(dir, 'loop-b'), join(dir, 'loop-a'))
    await symlink(join(dir, 'loop-a'), join(dir, 'loop-b'))
    for (const path of [
      dir,
      join(dir, 'fifo'),
      '/dev/zero',
      '/dev/null',
      join(dir, 'dangling'),
      join(dir, 'loop-a'),
      join(dir, 'missing', 'agent.yaml'),
    ]) {
      expect((await expectLoadsOrExplains(path, EXAMPLE_ENV)).loaded, path).toBe(false)
    }
  })
})

describe('loadAgentConfig on assembled documents, environments and secret files', () => {
  it('loads or explains documents assembled from right and wrong settings; what loads can be built', async () => {
    await files.write('secret.txt', `${MARK}-file\n`)
    let loaded = 0
    await fc.assert(
      fc.asyncProperty(configDocumentArbitrary(MARK), async (doc) => {
        const result = await expectLoadsOrExplains(await files.writeConfig(stringify(doc)), EXAMPLE_ENV, [
          MARK,
        ])
        if (result.loaded) loaded++
      }),
      RUNS(400),
    )
    // Some documents were right, so the build check ran.
    expect(loaded).toBeGreaterThan(0)
  })

  it('takes any environment value as text, and never repeats one in a message', async () => {
    const value = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.constantFrom(
        '',
        '${HAJRI_CLIENT_SECRET}',
        '$${',
        '${',
        '\n',
        'a: b',
        '# x',
        '"',
        "'",
        '\u0000',
        'x'.repeat(100_000),
      ),
    )
    await fc.assert(
      fc.asyncProperty(
        value,
        value,
        fc.constantFrom('site.id', 'cloud.url', 'port', 'topic', 'maxBytes'),
        async (secret, other, where) => {
          const env = {
            HAJRI_CLIENT_SECRET: `${MARK}${secret}`,
            HAJRI_CANTEEN_MQTT_PASSWORD: `${MARK}2`,
            OTHER: other,
          }
          let text = exampleText
          if (where === 'site.id') text = text.replace('id: pune-plant-1', 'id: ${OTHER}')
          if (where === 'cloud.url')
            text = text.replace('url: https://hajri.example.com', 'url: https://${OTHER}')
          if (where === 'port') text = text.replace(/port: 1883/, 'port: ${OTHER}')
          if (where === 'topic') text = text.replace('topic: punches/gate-1', 'topic: "punches/${OTHER}"')
          if (where === 'maxBytes') text = text.replace('maxBytes: 2GiB', 'maxBytes: ${OTHER}')
          const result = await expectLoadsOrExplains(await files.writeConfig(text), env, [MARK])
          if (result.loaded) expect(result.config.cloud.clientSecret).toBe(env.HAJRI_CLIENT_SECRET)
        },
      ),
      RUNS(200),
    )
  })

  it('reads or explains a secret file of any content or kind', async () => {
    const odd = join(files.dir, 'odd-secrets')
    await mkdir(odd, { recursive: true })
    execFileSync('mkfifo', [join(odd, 'fifo')])
    await symlink(join(odd, 'loop-b'), join(odd, 'loop-a'))
    await symlink(join(odd, 'loop-a'), join(odd, 'loop-b'))
    await symlink(join(odd, 'nowhere'), join(odd, 'dangling'))
    const kind = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.uint8Array({ maxLength: 200 }).map((b): [string, Buffer] => ['bytes', Buffer.from(b)]),
      },
      {
        weight: 2,
        arbitrary: fc
          .constantFrom(
            '',
            '\n',
            '\r\n\r\n',
            '\ufeff',
            '\ufeff\n',
            ' ',
            `${MARK}\n`,
            `\ufeff${MARK}\r\n`,
            `${MARK}\u0000`,
          )
          .map((s): [string, Buffer] => ['text', Buffer.from(s)]),
      },
      { weight: 1, arbitrary: fc.constant<[string, Buffer]>(['big', Buffer.alloc(64 * 1024 + 1, 0x41)]) },
      {
        weight: 2,
        arbitrary: fc
          .constantFrom('dir', 'fifo', 'loop', 'dangling', 'dev')
          .map((k): [string, Buffer] => [k, Buffer.alloc(0)]),
      },
    )
    await fc.assert(
      fc.asyncProperty(kind, fc.boolean(), async ([what, content], asClientSecret) => {
        const secretPath = join(files.dir, 'secret-under-test')
        await rm(secretPath, { recursive: true, force: true })
        const target =
          what === 'dir'
            ? odd
            : what === 'fifo'
              ? join(odd, 'fifo')
              : what === 'loop'
                ? join(odd, 'loop-a')
                : what === 'dangling'
                  ? join(odd, 'dangling')
                  : what === 'dev'
                    ? '/dev/zero'
                    : secretPath
        if (target === secretPath) await writeFile(secretPath, content)
        const text = asClientSecret
          ? exampleText.replace(
              'clientSecret: ${HAJRI_CLIENT_SECRET}',
              `clientSecretFile: ${JSON.stringify(target)}`,
            )
          : exampleText.replace(/passwordFile: .*gate-1\.pass/, `passwordFile: ${JSON.stringify(target)}`)
        expect(text).not.toBe(exampleText)
        const result = await expectLoadsOrExplains(await files.writeConfig(text), EXAMPLE_ENV, [MARK])
        if (result.loaded && asClientSecret) {
          expect(result.config.cloud.clientSecret).toBe(
            content
              .toString('utf8')
              .replace(/^\uFEFF/, '')
              .replace(/[\r\n]+$/, ''),
          )
        }
      }),
      RUNS(150),
    )
  })
})
