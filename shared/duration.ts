const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800, y: 31_536_000 }

/**
 * Parses a duration such as `90d`, `12h`, `30m`, `2y` (a year is 365 days) or a bare number of
 * seconds, into seconds. Returns undefined for anything else.
 */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d{1,9})([smhdwy]?)$/.exec(text.trim())
  if (!m) return undefined
  return Number(m[1]) * (UNITS[m[2] || 's'] ?? 1)
}
