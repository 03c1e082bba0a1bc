import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { SpooledPunch } from '../../agent/punch/spooled-punch.js'

/**
 * Fills a spool directory with `count` punches in chunk files of `chunkPunches`, in the format
 * agent/spool/chunk-log.ts writes (`chunk-<16-digit seq>-<count>.json` holding
 * `{kind:'chunk',version:1,seq,items}`), as a spool looks after a long cloud outage. Written
 * directly rather than through Spool.append: a million fsynced appends would take longer than the
 * drain being measured, and durability is not what this setup needs.
 */
export async function writeSpoolBacklog(
  dir: string,
  count: number,
  chunkPunches: number,
  punch: (i: number) => SpooledPunch,
): Promise<{ chunks: number; bytes: number }> {
  await mkdir(dir, { recursive: true })
  let bytes = 0
  let seq = 0
  for (let first = 0; first < count; first += chunkPunches) {
    seq++
    const items = Array.from({ length: Math.min(chunkPunches, count - first) }, (_, k) => punch(first + k))
    const text = JSON.stringify({ kind: 'chunk', version: 1, seq, items })
    await writeFile(join(dir, `chunk-${String(seq).padStart(16, '0')}-${items.length}.json`), text)
    bytes += Buffer.byteLength(text)
  }
  return { chunks: seq, bytes }
}
