import { type Document, isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml'
import { type ConfigProblem, type PathSegment, TOP_LEVEL } from './config-file-error.js'

/** A parsed configuration file: its data, and where in the text each value was written. */
interface YamlSource {
  value: unknown
  /** The line of the deepest part of `at` that is written in the file (for problems). */
  locate: (at: readonly PathSegment[]) => number | undefined
}

type YamlParse = { ok: true; source: YamlSource } | { ok: false; problems: ConfigProblem[] }

const MESSAGES: Readonly<Record<string, string>> = {
  MULTIPLE_DOCS: 'the file holds more than one YAML document (a second "---"); the agent reads one',
  DUPLICATE_KEY: 'a key is written twice in the same mapping',
}

/**
 * The parser's message without what it quotes of the file (`Unexpected scalar token in YAML
 * stream: "s3cret"`): the text around an error may be a secret.
 */
function sentence(text: string): string {
  const first = (text.split('\n')[0] ?? text).split(': ')[0] ?? text
  return first.charAt(0).toLowerCase() + first.slice(1)
}

/**
 * After one syntax error the parser's next ones are mostly its consequences (a broken line makes
 * the rest of the file "unexpected"): the first is the one to fix. A repeated key is independent
 * of the others, so each is kept.
 */
function syntaxErrorsWorthShowing<T extends { code: string }>(errors: readonly T[]): T[] {
  const firstOther = errors.find((e) => e.code !== 'DUPLICATE_KEY')
  return errors.filter((e) => e.code === 'DUPLICATE_KEY' || e === firstOther)
}

/**
 * Parses YAML 1.2 (so `yes`, `no` and `on` are text, not booleans). Merge keys (`<<: *serial-defaults`)
 * are allowed, for devices that share settings. Syntax errors are located by line and column; their
 * messages are the parser's own without its excerpt of the file, which could show a secret.
 */
export function parseYamlSource(text: string): YamlParse {
  const lineCounter = new LineCounter()
  const doc = parseDocument(text, {
    lineCounter,
    prettyErrors: false,
    merge: true,
    uniqueKeys: true,
    // Warnings (such as a mapping used as a key) are not printed to the process's stderr.
    logLevel: 'error',
  })
  if (doc.errors.length > 0) {
    return {
      ok: false,
      problems: syntaxErrorsWorthShowing(doc.errors).map((err) => {
        const { line, col } = lineCounter.linePos(err.pos[0])
        return {
          path: `line ${line}, column ${col}`,
          message: MESSAGES[err.code] ?? sentence(err.message),
          line,
        }
      }),
    }
  }
  let value: unknown
  try {
    // toJS refuses too many alias expansions (a "billion laughs" file) with an exception.
    value = doc.toJS({ maxAliasCount: 1000 })
  } catch (err) {
    return {
      ok: false,
      problems: [{ path: TOP_LEVEL, message: sentence(err instanceof Error ? err.message : String(err)) }],
    }
  }
  return { ok: true, source: { value, locate: (at) => locate(doc, lineCounter, at) } }
}

function locate(doc: Document, lineCounter: LineCounter, at: readonly PathSegment[]): number | undefined {
  const lineOf = (node: Node | null | undefined) =>
    node?.range ? lineCounter.linePos(node.range[0]).line : undefined
  let node: unknown = doc.contents
  let line: number | undefined
  for (const segment of at) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(segment))
      if (!pair) break
      line = lineOf(pair.key as Node) ?? line
      node = pair.value
    } else if (isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment]
      if (item === undefined) break
      line = lineOf(item as Node) ?? line
      node = item
    } else break
  }
  return line
}
