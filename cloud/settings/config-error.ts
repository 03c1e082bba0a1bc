/**
 * A setting that cannot be used, with every problem found (not just the first). A leaf: the
 * configuration and the database's secret key both throw it, and it imports nothing.
 */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}
