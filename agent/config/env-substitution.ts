import type { PathSegment } from './config-file-error.js'
import type { ProblemList } from './problem-list.js'

/**
 * `${NAME}` substitution (docs/decisions/0023-agent-yaml-configuration.md), done on the parsed document's
 * string values, not on the file's text: a secret holding `: `, `#` or a newline cannot change the YAML's
 * structure, and a value is always substituted as text. A field that wants a number must be written as one
 * (there is no coercion), so `port: ${PORT}` is refused rather than guessed at.
 *
 * - `${NAME}`: the variable's value; NAME is letters, digits and `_`, not starting with a digit.
 *   A variable that is set to the empty string substitutes as empty (as in a shell).
 * - `$${`: a literal `${`. Any other `$` is itself.
 * - A `${` that starts no valid reference is an error, so a typo is not sent to the cloud as text.
 * Messages name the variable and the path, never the value (it is usually a secret).
 */

const REFERENCE = /\$\$\{|\$\{([^}]*)(\}?)/g
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** Substitutes one string; problems are added at `at`. */
export function substituteString(
  text: string,
  env: NodeJS.ProcessEnv,
  at: readonly PathSegment[],
  problems: ProblemList,
): string {
  if (!text.includes('${')) return text
  return text.replace(REFERENCE, (match, name: string | undefined, close: string) => {
    if (match === '$${') return '${'
    if (close !== '}' || name === undefined || !NAME.test(name)) {
      problems.add(
        at,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the message shows the ${NAME} syntax itself.
        'has a "${" that starts no ${NAME} reference (NAME is letters, digits and _; write $${ for a literal ${)',
      )
      return match
    }
    const value = env[name]
    if (value === undefined) {
      problems.add(at, `uses the environment variable ${name}, which is not set`)
      return match
    }
    return value
  })
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/**
 * A copy of the parsed document with every string value substituted. The copy also undoes YAML
 * aliases (each use gets its own object, so filling defaults in one cannot change another), and
 * refuses what is not plain data: an alias that contains itself, or a tag such as `!!binary`.
 */
export function substituteEnv(document: unknown, env: NodeJS.ProcessEnv, problems: ProblemList): unknown {
  const ancestors = new Set<object>()
  const visit = (value: unknown, at: PathSegment[]): unknown => {
    if (typeof value === 'string') return substituteString(value, env, at, problems)
    if (value === null || typeof value !== 'object') return value
    if (ancestors.has(value)) {
      problems.add(at, 'is a YAML alias of a mapping or list that contains it')
      return null
    }
    ancestors.add(value)
    try {
      if (Array.isArray(value)) return value.map((item, i) => visit(item, [...at, i]))
      if (!isPlainObject(value)) {
        problems.add(at, 'is not plain YAML data (tags such as !!binary are not supported)')
        return null
      }
      const copy: Record<string, unknown> = {}
      for (const [key, item] of Object.entries(value)) {
        // defineProperty: a key `__proto__` stays a key (and is refused as unknown), not a prototype.
        Object.defineProperty(copy, key, {
          value: visit(item, [...at, key]),
          enumerable: true,
          writable: true,
          configurable: true,
        })
      }
      return copy
    } finally {
      ancestors.delete(value)
    }
  }
  return visit(document, [])
}
