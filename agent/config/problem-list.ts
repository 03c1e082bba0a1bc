import { type ConfigProblem, formatPath, type PathSegment } from './config-file-error.js'

/**
 * The problems found so far, at most one per path: a field is reported once, by the first check
 * that finds it wrong (a `${VAR}` that is not set is not also "not a URL"). Checks run from the
 * most basic (YAML, substitution) to the most specific (cross-field rules, files), so the first
 * message is the one to act on.
 */
export class ProblemList {
  private readonly byPath = new Map<string, { at: readonly PathSegment[]; message: string }>()

  add(at: readonly PathSegment[], message: string): void {
    const key = formatPath(at)
    if (!this.byPath.has(key)) this.byPath.set(key, { at: [...at], message })
  }

  has(at: readonly PathSegment[]): boolean {
    return this.byPath.has(formatPath(at))
  }

  get size(): number {
    return this.byPath.size
  }

  /**
   * The problems with the file line `locate` finds for each, in the order of the file (to be read
   * alongside it); those about something not written in it (a missing setting) come first.
   */
  toProblems(locate: (at: readonly PathSegment[]) => number | undefined = () => undefined): ConfigProblem[] {
    const problems: ConfigProblem[] = [...this.byPath].map(([path, { at, message }]) => {
      const line = locate(at)
      return line === undefined ? { path, message } : { path, message, line }
    })
    return problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0))
  }
}
