/** What the chaos tests use to inject faults and count them. */
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

/**
 * A duration or count from the environment (HAJRI_CHAOS_*), or its default: a whole number, else a
 * clear error rather than a run that means something else than asked.
 */
export function chaosSetting(name: string, fallback: number, min = 0): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+$/.test(raw) || Number(raw) < min)
    throw new Error(`${name} must be a whole number of at least ${min}, got "${raw}"`)
  return Number(raw)
}

/** Faults injected so far, by kind, in the order they first came. */
export class FaultLog {
  readonly counts = new Map<string, number>()

  add(kind: string): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1)
  }

  get total(): number {
    return [...this.counts.values()].reduce((a, b) => a + b, 0)
  }

  rows(): Record<string, number> {
    return Object.fromEntries([...this.counts].map(([kind, n]) => [`fault: ${kind}`, n]))
  }
}

/** What was in the chunk file the test damaged. */
export interface DamagedChunk {
  file: string
  /** The punch ids it held (read before the damage: it was whole). */
  ids: string[]
}

/**
 * Damages the chunk of a stopped agent's spool that holds the most punches (the oldest of those) so
 * that the file no longer parses while every punch record in it stays whole (a corrupted
 * spool chunk, docs/development/architecture.md#the-agents-guarantees): its JSON frame broken (a doubled
 * comma after "kind") and garbage appended (NUL bytes and the start of a record, as a torn write of the next
 * one would leave).
 */
export async function damageFullestChunk(spoolDir: string): Promise<DamagedChunk> {
  const chunks = (await readdir(spoolDir))
    .map((name) => ({ name, m: /^chunk-(\d{16})-(\d+)\.json$/.exec(name) }))
    .filter((c) => c.m !== null)
    .map((c) => ({ name: c.name, seq: Number(c.m?.[1]), count: Number(c.m?.[2]) }))
    .sort((a, b) => b.count - a.count || a.seq - b.seq)
  const chosen = chunks[0]
  if (!chosen) throw new Error(`no chunk file in ${spoolDir} to damage`)
  const file = join(spoolDir, chosen.name)
  const text = await readFile(file, 'utf8')
  const ids = (JSON.parse(text) as { items: { id: string }[] }).items.map((p) => p.id)
  const damaged = `${text.replace('"kind":"chunk"', '"kind":"chunk",,')}\u0000\u0000{"id":"hjp_`
  if (!damaged.includes('"kind":"chunk",,')) throw new Error(`${file} is not a chunk as expected`)
  await writeFile(file, damaged)
  return { file, ids }
}
