/**
 * What is wrong with an agent configuration file: every error with its path, so a bad file gets
 * one message per wrong field, all at once, and the agent does not start
 * (docs/decisions/0023-agent-yaml-configuration.md).
 */

/** One thing wrong with the file. */
export interface ConfigProblem {
  /**
   * Where: a dotted and indexed path into the file (`devices[1].serial.baudRate`), `line 6, column 1`
   * for a YAML syntax error, `(top level)` for the document as a whole, or the file's own path when
   * it cannot be read.
   */
  path: string
  /** What is wrong. Never holds the value of a secret. */
  message: string
  /** The line of the file the path points at, when it is written there (not for defaults). */
  line?: number
}

/** A key or an index on the way from the top of the document to a value. */
export type PathSegment = string | number

/** The path of a problem about the document as a whole (an empty file, a list instead of a mapping). */
export const TOP_LEVEL = '(top level)'

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/
/** Unknown keys come from the file: a pasted paragraph must not become a paragraph-long path. */
const MAX_KEY_CHARS = 60

/** `['devices', 1, 'serial', 'baudRate']` → `devices[1].serial.baudRate`; odd keys are quoted. */
export function formatPath(segments: readonly PathSegment[]): string {
  let out = ''
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`
    else if (PLAIN_KEY.test(segment)) out += out === '' ? segment : `.${segment}`
    else {
      const key = segment.length > MAX_KEY_CHARS ? `${segment.slice(0, MAX_KEY_CHARS)}…` : segment
      out += `[${JSON.stringify(key)}]`
    }
  }
  return out === '' ? TOP_LEVEL : out
}

/** `devices[1].serial.baudRate: must be >= 50 (line 23)`: one line per problem. */
export function formatProblem(problem: ConfigProblem): string {
  return `${problem.path}: ${problem.message}${problem.line === undefined ? '' : ` (line ${problem.line})`}`
}

/** The configuration file cannot be used; `problems` holds every reason found, never fewer than one. */
export class ConfigFileError extends Error {
  readonly code = 'config_invalid'

  constructor(
    /** The file, as an absolute path. */
    readonly file: string,
    readonly problems: readonly ConfigProblem[],
  ) {
    const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`
    super(`${file}: ${count}\n${problems.map((p) => `  ${formatProblem(p)}`).join('\n')}`)
    this.name = 'ConfigFileError'
  }
}
