/**
 * What a child process holds, read from outside it (the soak: memory, open handles and
 * spool size stay flat): resident memory and open file descriptors from /proc, and the V8 heap and
 * libuv handles from Node's own diagnostic report, which the child writes after a full garbage
 * collection when it gets SIGUSR2 (collect-then-report.mjs, preloaded by `reportEnv`). Neither
 * product has to expose anything for it.
 */
import { type Dirent, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { readdir, readFile, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { sleep } from '../support/e2e-kit.js'

/** The environment for a child to collect its garbage, then write a diagnostic report into `directory`, on SIGUSR2. */
export function reportEnv(directory: string): { NODE_OPTIONS: string; HAJRI_SOAK_REPORT_DIR: string } {
  const preload = new URL('./collect-then-report.mjs', import.meta.url).href
  return { NODE_OPTIONS: `--import=${preload}`, HAJRI_SOAK_REPORT_DIR: directory }
}

export interface ProcessSample {
  rssMB: number
  /** Open file descriptors, and how many of them are sockets. */
  fds: number
  sockets: number
  /** V8 heap in use right after a full collection, and reserved (the diagnostic report's javascriptHeap). */
  heapUsedMB: number
  heapTotalMB: number
  /** libuv handles (timers, sockets, pipes, signal watchers...) alive in the event loop. */
  handles: number
  /** The same, by type, for a reader looking for the kind that grows. */
  handlesByType: Record<string, number>
}

const MB = 1e6

function rssMB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status)
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`)
  return (Number(match[1]) * 1024) / MB
}

function fileDescriptors(pid: number): { fds: number; sockets: number } {
  const dir = `/proc/${pid}/fd`
  let sockets = 0
  const entries = readdirSync(dir)
  for (const fd of entries) {
    try {
      if (readlinkSync(join(dir, fd)).startsWith('socket:')) sockets++
    } catch {
      // Closed between the listing and the look: it is not open any more.
    }
  }
  return { fds: entries.length, sockets }
}

interface NodeReport {
  javascriptHeap?: { usedMemory?: number; totalMemory?: number }
  libuv?: { type?: string }[]
}

/**
 * Asks `pid` for a diagnostic report and reads it from `directory` (where only this process's
 * reports go): the V8 heap and the libuv handles at that moment.
 */
async function nodeReport(pid: number, directory: string): Promise<NodeReport> {
  for (const old of await readdir(directory)) await rm(join(directory, old), { force: true })
  process.kill(pid, 'SIGUSR2')
  const deadline = Date.now() + 15_000
  for (;;) {
    const names = (await readdir(directory)).filter((name) => name.endsWith('.json'))
    for (const name of names) {
      const path = join(directory, name)
      try {
        const report = JSON.parse(await readFile(path, 'utf8')) as NodeReport
        await rm(path, { force: true })
        return report
      } catch {
        // Still being written.
      }
    }
    if (Date.now() > deadline) throw new Error(`process ${pid} wrote no diagnostic report in 15 s`)
    await sleep(20)
  }
}

export async function probeProcess(pid: number, reportDirectory: string): Promise<ProcessSample> {
  const report = await nodeReport(pid, reportDirectory)
  const handlesByType: Record<string, number> = {}
  for (const handle of report.libuv ?? []) {
    const type = handle.type ?? 'unknown'
    // The loop itself is listed among its handles.
    if (type === 'loop') continue
    handlesByType[type] = (handlesByType[type] ?? 0) + 1
  }
  return {
    rssMB: rssMB(pid),
    ...fileDescriptors(pid),
    heapUsedMB: (report.javascriptHeap?.usedMemory ?? Number.NaN) / MB,
    heapTotalMB: (report.javascriptHeap?.totalMemory ?? Number.NaN) / MB,
    handles: Object.values(handlesByType).reduce((a, b) => a + b, 0),
    handlesByType,
  }
}

/** Bytes and files under a directory (the spool on disk: chunks, indexes, dead letters). */
export async function directorySize(dir: string): Promise<{ bytes: number; files: number }> {
  let bytes = 0
  let files = 0
  let entries: Dirent[]
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive: true })
  } catch {
    return { bytes: 0, files: 0 }
  }
  for (const entry of entries) {
    if (!entry.isFile()) continue
    try {
      bytes += (await stat(join(entry.parentPath ?? entry.path, entry.name))).size
      files++
    } catch {
      // Removed meanwhile (the forwarder deletes sent chunks).
    }
  }
  return { bytes, files }
}

/** A file's size, 0 when it is not there (SQLite's WAL between checkpoints). */
export async function fileSize(path: string): Promise<number> {
  try {
    return (await stat(path)).size
  } catch {
    return 0
  }
}
