// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${NAME} references are among the generated values.
import { readFile } from 'node:fs/promises'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse, stringify } from 'yaml'
import { ConfigFileError } from '../../../agent/config/config-file-error.js'
import { loadAgentConfig } from '../../../agent/config/load.js'
import { ConfigDir, type Doc, EXAMPLE, EXAMPLE_ENV, exampleInto } from './config-fixture.js'

/**
 * Whatever IT staff write, the loader either returns a configuration or a ConfigFileError listing
 * at least one problem, each with a path and a message: it never crashes, and never gives up with a
 * bare exception. The documents are mutations of the valid example (settings dropped, renamed,
 * given other types or wrong values), so they reach far into the checks, not just the first one.
 */

type Path = (string | number)[]

/** Every path in a document, containers included. */
function pathsOf(node: unknown, at: Path = [], out: Path[] = []): Path[] {
  out.push(at)
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) pathsOf(item, [...at, i], out)
  } else if (typeof node === 'object' && node !== null) {
    for (const [key, value] of Object.entries(node)) pathsOf(value, [...at, key], out)
  }
  return out
}

function parentOf(doc: unknown, at: Path): Record<string | number, unknown> | undefined {
  let node = doc
  for (const key of at.slice(0, -1)) {
    if (typeof node !== 'object' || node === null) return undefined
    node = (node as Record<string | number, unknown>)[key]
  }
  return typeof node === 'object' && node !== null ? (node as Record<string | number, unknown>) : undefined
}

const wrongValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    '',
    ' ',
    '${UNSET_VARIABLE}',
    '${',
    '$${',
    '${HAJRI_CLIENT_SECRET}',
    '2GiB',
    '0B',
    '99999999TiB',
    '127.0.0.1:0',
    '[::1]:9410',
    'punches/#',
    '+',
    '../../etc/passwd',
    '/dev/null',
    '.',
    'Asia/Nowhere',
    '2099-01-01T00:00:00Z',
    'csv',
    'stx-etx',
    'IN',
    -1,
    0,
    1.5,
    65536,
    Number.MAX_SAFE_INTEGER,
    true,
    null,
    [],
    {},
  ),
  fc.string({ maxLength: 40 }),
)

type Mutation =
  | { kind: 'drop'; pick: number }
  | { kind: 'rename'; pick: number; name: string }
  | { kind: 'retype'; pick: number; value: unknown }

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('drop' as const), pick: fc.nat() }),
  fc.record({
    kind: fc.constant('rename' as const),
    pick: fc.nat(),
    name: fc.oneof(
      fc.string({ minLength: 1, maxLength: 12 }),
      fc.constantFrom('__proto__', 'constructor', 'type'),
    ),
  }),
  fc.record({ kind: fc.constant('retype' as const), pick: fc.nat(), value: wrongValue }),
)

function mutate(doc: Doc, m: Mutation): void {
  const paths = pathsOf(doc).filter((p) => p.length > 0)
  const at = paths[m.pick % paths.length]
  if (!at) return
  const parent = parentOf(doc, at)
  const key = at[at.length - 1] as string | number
  if (!parent) return
  if (m.kind === 'drop') {
    if (Array.isArray(parent)) parent.splice(key as number, 1)
    else delete parent[key]
  } else if (m.kind === 'retype') parent[key] = m.value
  else if (!Array.isArray(parent)) {
    Object.defineProperty(parent, m.name, {
      value: parent[key],
      enumerable: true,
      writable: true,
      configurable: true,
    })
    if (m.name !== key) delete parent[key]
  }
}

async function expectLoadsOrExplains(path: string): Promise<void> {
  try {
    await loadAgentConfig(path, EXAMPLE_ENV)
  } catch (err) {
    if (!(err instanceof ConfigFileError)) throw err
    expect(err.problems.length).toBeGreaterThan(0)
    for (const problem of err.problems) {
      expect(typeof problem.path === 'string' && problem.path.length > 0, JSON.stringify(problem)).toBe(true)
      expect(typeof problem.message === 'string' && problem.message.length > 0, JSON.stringify(problem)).toBe(
        true,
      )
    }
  }
}

let files: ConfigDir
let example: Doc
let exampleText: string
beforeAll(async () => {
  files = await ConfigDir.create()
  await exampleInto(files)
  exampleText = await readFile(EXAMPLE, 'utf8')
  example = parse(exampleText) as Doc
})
afterAll(async () => {
  await files.remove()
})

describe('loadAgentConfig on generated documents', () => {
  it('loads or explains every mutation of the example, and never crashes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 4 }), async (mutations) => {
        const doc = structuredClone(example)
        for (const m of mutations) mutate(doc, m)
        await expectLoadsOrExplains(await files.writeConfig(stringify(doc)))
      }),
      { numRuns: 300 },
    )
  })

  it('loads or explains the example with its text cut, spliced or garbled', async () => {
    const edit = fc.record({
      at: fc.nat(),
      remove: fc.nat({ max: 40 }),
      insert: fc.oneof(
        fc.string({ maxLength: 10 }),
        fc.constantFrom(
          ':',
          '- ',
          '\t',
          '  ',
          '"',
          "'",
          '{',
          '[',
          '&a ',
          '*a',
          '<<: ',
          '!!binary ',
          '---\n',
          '#',
          '\n',
        ),
      ),
    })
    await fc.assert(
      fc.asyncProperty(fc.array(edit, { minLength: 1, maxLength: 5 }), async (edits) => {
        let text = exampleText
        for (const { at, remove, insert } of edits) {
          const i = at % (text.length + 1)
          text = text.slice(0, i) + insert + text.slice(i + remove)
        }
        await expectLoadsOrExplains(await files.writeConfig(text))
      }),
      { numRuns: 300 },
    )
  })

  it('is not fooled into success: the untouched example loads', async () => {
    await expect(loadAgentConfig(await files.writeConfig(exampleText), EXAMPLE_ENV)).resolves.toMatchObject({
      site: { id: 'pune-plant-1' },
    })
  })
})
