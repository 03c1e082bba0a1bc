/**
 * The reading side of agent-zk-read, run as a child process of its own (compiled by tsc, or through
 * tsx): its RSS is then the reader's alone, while the emulator, which holds the 100,000-record log
 * too, stays in the benchmark's process. `node agent-zk-reader.js '<ZkReaderJob as JSON>'`: it
 * connects, makes `reads` full reads in a row, and sends one ZkReaderMessage over IPC.
 */
import dgram from 'node:dgram'
import { writeFileSync } from 'node:fs'
import net from 'node:net'
import { ZkClient } from '../../agent/inputs/zk/zk-client.js'
import type { ZkAttendanceRecord } from '../../agent/inputs/zk/zk-records.js'
import { formatZkWallTime } from '../../agent/inputs/zk/zk-time.js'
import { memoryMB } from './agent-proc-stats.js'
import type { ZkReaderJob, ZkReaderMessage, ZkReaderReport } from './agent-zk-messages.js'

const REQUEST_TIMEOUT_MS = 10_000

/**
 * Resets VmHWM to the current RSS (proc(5), /proc/<pid>/clear_refs, value 5, Linux 4.0 and later),
 * so the peak measured is the reads' and not the start-up's; false where the kernel refuses.
 */
function resetPeak(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5')
    return true
  } catch {
    return false
  }
}

function describeRecord(r: ZkAttendanceRecord | undefined): string | null {
  return r ? `${r.uid} ${r.userId} ${r.verify} ${r.state} ${formatZkWallTime(r.time)}` : null
}

/** Times `read` in wall and CPU seconds (process.cpuUsage: every thread of this process). */
async function timed<T>(read: () => Promise<T>): Promise<{ value: T; seconds: number; cpuSeconds: number }> {
  const cpu = process.cpuUsage()
  const started = performance.now()
  const value = await read()
  const seconds = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  return { value, seconds, cpuSeconds: (used.user + used.system) / 1e6 }
}

function emptyReport(rssBeforeMB: number, peakReset: boolean): ZkReaderReport {
  return {
    type: 'done',
    timings: [],
    rssBeforeMB,
    peakFirstReadMB: Number.NaN,
    peakMB: Number.NaN,
    peakReset,
    heapUsedMB: Number.NaN,
    arrayBuffersMB: Number.NaN,
    recordsRead: [],
    malformed: [],
    recordBytes: [],
    firstRecord: null,
    lastRecord: null,
    bytesRead: [],
  }
}

/** After the first read, with its result still held: the peak and the heap of one read. */
function afterFirstRead(report: ZkReaderReport): void {
  report.peakFirstReadMB = memoryMB(process.pid).peak
  const usage = process.memoryUsage()
  report.heapUsedMB = usage.heapUsed / 1e6
  report.arrayBuffersMB = usage.arrayBuffers / 1e6
}

/**
 * One full read, its result checked into `report` and dropped before this returns: a suspended
 * async function can keep the values of its earlier awaits alive, and a loop that held the last
 * read's 100,000 records through the next read would measure two reads' memory, not one.
 */
async function zkRead(client: ZkClient, report: ZkReaderReport, first: boolean): Promise<void> {
  const { value, seconds, cpuSeconds } = await timed(() => client.readAttendance())
  report.timings.push({ seconds, cpuSeconds })
  report.recordsRead.push(value.records.length)
  report.malformed.push(value.malformed.length)
  report.recordBytes.push(value.recordBytes ?? null)
  if (first) {
    afterFirstRead(report)
    report.firstRecord = describeRecord(value.records[0])
    report.lastRecord = describeRecord(value.records.at(-1))
  }
}

async function readZk(job: ZkReaderJob): Promise<ZkReaderReport> {
  const client = await ZkClient.connect({
    host: job.host,
    port: job.port,
    transport: job.transport,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
  })
  try {
    const report = emptyReport(memoryMB(process.pid).rss, resetPeak())
    for (let i = 0; i < job.reads; i++) await zkRead(client, report, i === 0)
    report.peakMB = memoryMB(process.pid).peak
    return report
  } finally {
    await client.close()
  }
}

/**
 * The transport ceiling: the same bytes in the same chunks, one request at a time, each an 8-byte
 * `start u32, size u32` answered by exactly `size` bytes (over UDP in datagrams of the emulator's
 * size), kept and joined as the client keeps and joins its chunks; no framing, checksum or decoding.
 */
async function readRaw(job: ZkReaderJob): Promise<ZkReaderReport> {
  const link = job.transport === 'tcp' ? await rawTcp(job) : await rawUdp(job)
  try {
    const report = emptyReport(memoryMB(process.pid).rss, resetPeak())
    for (let i = 0; i < job.reads; i++) await rawRead(link, job, report, i === 0)
    report.peakMB = memoryMB(process.pid).peak
    return report
  } finally {
    link.close()
  }
}

/** One raw read, dropped before this returns (as zkRead). */
async function rawRead(
  link: RawLink,
  job: ZkReaderJob,
  report: ZkReaderReport,
  first: boolean,
): Promise<void> {
  const { value, seconds, cpuSeconds } = await timed(async () => {
    const chunks: Buffer[] = []
    for (let start = 0; start < job.datasetBytes; start += job.chunkBytes) {
      chunks.push(await link.request(start, Math.min(job.chunkBytes, job.datasetBytes - start)))
    }
    return Buffer.concat(chunks)
  })
  report.timings.push({ seconds, cpuSeconds })
  report.bytesRead.push(value.length)
  if (first) afterFirstRead(report)
}

interface RawLink {
  /** Asks for `size` bytes from `start`; resolves with them once all have come. */
  request(start: number, size: number): Promise<Buffer>
  close(): void
}

function rawRequest(start: number, size: number): Buffer {
  const request = Buffer.alloc(8)
  request.writeUInt32LE(start, 0)
  request.writeUInt32LE(size, 4)
  return request
}

/** Gathers one answer's bytes from whatever pieces the socket gives. */
class Gather {
  private parts: Buffer[] = []
  private received = 0
  private waiting:
    | { size: number; resolve: (b: Buffer) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }
    | undefined

  expect(size: number): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no ${size}-byte answer within ${REQUEST_TIMEOUT_MS} ms`)),
        REQUEST_TIMEOUT_MS,
      )
      this.waiting = { size, resolve, reject, timer }
    })
  }

  push(bytes: Buffer): void {
    const waiting = this.waiting
    if (!waiting) throw new Error(`${bytes.length} bytes came unasked`)
    // Copied, as the client's reassembler copies: the socket's buffer is not ours to keep.
    this.parts.push(Buffer.from(bytes))
    this.received += bytes.length
    if (this.received < waiting.size) return
    clearTimeout(waiting.timer)
    this.waiting = undefined
    const parts = this.parts
    const received = this.received
    this.parts = []
    this.received = 0
    if (received > waiting.size) waiting.reject(new Error(`${received} bytes for ${waiting.size} asked`))
    else waiting.resolve(parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, received))
  }

  fail(error: Error): void {
    const waiting = this.waiting
    this.waiting = undefined
    if (waiting) {
      clearTimeout(waiting.timer)
      waiting.reject(error)
    }
  }
}

function rawTcp(job: ZkReaderJob): Promise<RawLink> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: job.host, port: job.port })
    const gather = new Gather()
    socket.once('error', reject)
    socket.on('data', (bytes: Buffer) => gather.push(bytes))
    socket.on('close', () => gather.fail(new Error('the raw TCP peer closed the connection')))
    socket.once('connect', () => {
      socket.setNoDelay(true)
      resolve({
        request: (start, size) => {
          const answer = gather.expect(size)
          socket.write(rawRequest(start, size))
          return answer
        },
        close: () => socket.destroy(),
      })
    })
  })
}

function rawUdp(job: ZkReaderJob): Promise<RawLink> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket('udp4')
    const gather = new Gather()
    socket.once('error', reject)
    socket.on('message', (bytes: Buffer) => gather.push(bytes))
    socket.connect(job.port, job.host, () => {
      resolve({
        request: (start, size) => {
          const answer = gather.expect(size)
          socket.send(rawRequest(start, size))
          return answer
        },
        close: () => socket.close(),
      })
    })
  })
}

function tell(message: ZkReaderMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) {
      process.stdout.write(`${JSON.stringify(message)}\n`)
      resolve()
      return
    }
    process.send(message, () => resolve())
  })
}

const job = JSON.parse(process.argv[2] ?? '{}') as ZkReaderJob
try {
  await tell(await (job.kind === 'zk' ? readZk(job) : readRaw(job)))
} catch (err) {
  await tell({ type: 'failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) })
  process.exitCode = 1
}
process.disconnect?.()
