import { closeSync, fdatasyncSync, openSync, rmSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { median } from '../support/median.js'

/**
 * Median time of one 4 KiB write + fdatasync in `directory`, ms: what each durable SQLite commit
 * waits for at least (WAL, synchronous=FULL syncs the log on every commit). Endpoints that commit
 * per request follow the disk, which the CPU-only baselines do not touch, so the run records it.
 */
export function fsyncLatencyMs(directory: string, samples = 100): number {
  const path = join(directory, 'fsync-probe')
  const fd = openSync(path, 'w')
  const page = Buffer.alloc(4096, 1)
  const times: number[] = []
  try {
    for (let i = 0; i < samples; i++) {
      const started = process.hrtime.bigint()
      writeSync(fd, page)
      fdatasyncSync(fd)
      times.push(Number(process.hrtime.bigint() - started) / 1e6)
    }
  } finally {
    closeSync(fd)
    rmSync(path, { force: true })
  }
  return median(times)
}

/** The note a benchmark prints about the disk it ran on. */
export function fsyncNote(beforeMs: number, afterMs: number): string {
  return (
    `fsync (4 KiB write + fdatasync) in the database directory: median ${beforeMs.toFixed(2)} ms before ` +
    `the load, ${afterMs.toFixed(2)} ms after.`
  )
}
