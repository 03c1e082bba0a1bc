import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ZK_TCP_CHUNK_BYTES, ZK_UDP_CHUNK_BYTES } from '../../agent/inputs/zk/zk-client.js'
import type { ZkLogRecord } from '../../agent/simulator/zk-device/zk-attendance-log.js'
import { ZkDevice } from '../../agent/simulator/zk-device/zk-device.js'
import { readAgentBenchSettings } from './agent-bench-settings.js'
import { requireProcfs } from './agent-proc-stats.js'
import type { ZkReaderJob, ZkReaderReport, ZkReadKind } from './agent-zk-messages.js'
import { ZkRawPeer } from './agent-zk-raw-peer.js'
import { runZkReader, zkReaderRuntime } from './agent-zk-reader-process.js'
import type { BenchContext, Benchmark } from './benchmark.js'
import { type BenchResult, type Figure, ratio } from './report.js'

/*
 * agent-zk-read: how fast, and at what memory, the agent's ZK client reads a full attendance log
 * (docs/development/benchmarks.md). The baselines, and why:
 * - speed: a plain request/response loop moving the same bytes in the same chunks (and datagrams)
 *   over the same loopback, between the same two processes. It is what the transport allows a
 *   reader that asks for one chunk at a time, as the protocol makes every client do (ZK protocol
 *   CMD_DATA_RDY, docs/development/zk-protocol.md); the ratio is the share of it that the framing,
 *   checksums, record decoding and the emulator leave, and it carries over to another machine
 *   where a records/s figure does not;
 * - memory: the reading process's own RSS before its first read (Node and the client, connected
 *   and idle), and for what a read adds, the dataset's size: the least any reader that keeps the
 *   log must hold. The emulator holds the log too, so the reader runs in a process of its own.
 */

/** A full terminal: 100,000 records is the emulator's (and many TFT terminals') log capacity. */
const RECORDS = 100_000
const RECORD_BYTES = 40
/** ZK protocol bulk read: the dataset is a u32 byte count, then the records. */
const DATASET_BYTES = 4 + RECORDS * RECORD_BYTES
/** Data bytes per UDP CMD_DATA packet: the emulator's default, pyzk's recv(1024 + 8) (zk-protocol.md). */
const UDP_DATAGRAM_BYTES = 1024

/** HAJRI_BENCH_ZK_READS: full reads per reading process, 4 by default (at least 2: one cold, one warm). */
function readsSetting(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 4
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 2)
    throw new Error(`HAJRI_BENCH_ZK_READS must be a whole number of 2 or more, got "${raw}"`)
  return value
}

/**
 * Full reads per reading process: the first is cold (a fresh process, its JIT not warm), the rest
 * are timed. The device keeps no cursor, so the agent reads the whole log at every poll: warm reads
 * are its steady state.
 */
const READS = readsSetting(process.env.HAJRI_BENCH_ZK_READS)
const TRANSPORTS = ['tcp', 'udp'] as const
type Transport = (typeof TRANSPORTS)[number]

const CHUNK_BYTES: Record<Transport, number> = { tcp: ZK_TCP_CHUNK_BYTES, udp: ZK_UDP_CHUNK_BYTES }
const MB = 1e6

/** One reading process: its job, its report, and the emulator's process CPU meanwhile. */
interface Job {
  round: number
  kind: ZkReadKind
  transport: Transport
  report: ZkReaderReport
  /** CPU seconds of this process (the emulator or the raw peer) while the child ran. */
  serverCpuSeconds: number
}

/** Pads a number to `width` digits. */
const pad = (n: number, width = 2) => String(n).padStart(width, '0')

/**
 * The log of a terminal in use for a year: 977 PINs of five digits, one punch every five minutes
 * from 2026-01-01, fingerprint or face, in and out. Varied, so no record is a copy of the last.
 */
function logRecord(i: number) {
  const t = new Date(Date.UTC(2026, 0, 1) + i * 300_000)
  return {
    userId: String(10_000 + ((i * 7919) % 977)),
    time: `${t.getUTCFullYear()}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())}T${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}:${pad(t.getUTCSeconds())}`,
    verify: i % 3 === 0 ? 15 : 1,
    state: i % 2,
  }
}

/** As the reader describes a record (agent-zk-reader.ts describeRecord). */
function describeRecord(r: ZkLogRecord | undefined): string | null {
  return r ? `${r.uid} ${r.userId} ${r.verify} ${r.state} ${r.time}` : null
}

const warm = (r: ZkReaderReport) => r.timings.slice(1)

/** Records per second over the warm reads of `jobs` (a raw read moves the bytes of RECORDS records). */
function warmRate(jobs: readonly Job[]): number {
  const timings = jobs.flatMap((j) => warm(j.report))
  return (timings.length * RECORDS) / timings.reduce((acc, t) => acc + t.seconds, 0)
}

const fixed = (values: readonly number[], digits: number) => values.map((v) => v.toFixed(digits)).join(', ')

/** Why a job's reads did not read what the device holds, if they did not. */
function jobProblems(job: Job, expected: { first: string | null; last: string | null }): string[] {
  const { report } = job
  const what = `${job.kind} ${job.transport} round ${job.round}`
  const problems: string[] = []
  if (report.timings.length !== READS) problems.push(`${what}: ${report.timings.length} reads, not ${READS}`)
  if (job.kind === 'raw') {
    const short = report.bytesRead.filter((n) => n !== DATASET_BYTES)
    if (short.length > 0)
      problems.push(`${what}: raw reads of ${short.join(', ')} bytes, not ${DATASET_BYTES}`)
    return problems
  }
  if (report.recordsRead.some((n) => n !== RECORDS))
    problems.push(`${what}: reads returned ${report.recordsRead.join(', ')} records, not ${RECORDS}`)
  if (report.malformed.some((n) => n !== 0))
    problems.push(`${what}: malformed records per read ${report.malformed.join(', ')}`)
  if (report.recordBytes.some((n) => n !== RECORD_BYTES))
    problems.push(`${what}: record sizes ${report.recordBytes.join(', ')}, not ${RECORD_BYTES}`)
  if (report.firstRecord !== expected.first || report.lastRecord !== expected.last)
    problems.push(
      `${what}: read first/last records "${report.firstRecord}" / "${report.lastRecord}", the device holds ` +
        `"${expected.first}" / "${expected.last}"`,
    )
  return problems
}

async function run(context: BenchContext): Promise<BenchResult> {
  requireProcfs()
  const { settings, log } = context
  const agentSettings = readAgentBenchSettings()
  const startedAt = new Date()
  const problems: string[] = []
  const jobs: Job[] = []
  const dir = await mkdtemp(join(tmpdir(), 'hajri-bench-agent-zk-'))
  let command = ''
  let fillSeconds = Number.NaN
  let deviceChunks = 0
  try {
    const runtime = await zkReaderRuntime(agentSettings, join(dir, 'build'))
    command = runtime.command
    const device = new ZkDevice({
      port: 0,
      recordSize: RECORD_BYTES,
      recordCapacity: RECORDS,
      udpPacketData: UDP_DATAGRAM_BYTES,
      time: '2026-11-26T09:00:00',
    })
    const filling = performance.now()
    device.fillLog(RECORDS, logRecord)
    fillSeconds = (performance.now() - filling) / 1000
    const records = device.records
    const expected = { first: describeRecord(records[0]), last: describeRecord(records[RECORDS - 1]) }
    // The peer's bytes need only be as many as the device's dataset; what they are does not matter.
    const peer = new ZkRawPeer(Buffer.alloc(DATASET_BYTES, 0x5a), UDP_DATAGRAM_BYTES)
    await device.start()
    await peer.start()
    try {
      for (let round = 1; round <= settings.rounds; round++) {
        for (const transport of TRANSPORTS) {
          // Baseline then subject, in alternating rounds, so drift on a shared machine hits both.
          for (const kind of ['raw', 'zk'] as const) {
            const job: ZkReaderJob = {
              kind,
              transport,
              host: '127.0.0.1',
              port: kind === 'zk' ? device.port : peer.port,
              reads: READS,
              datasetBytes: DATASET_BYTES,
              chunkBytes: CHUNK_BYTES[transport],
            }
            const chunksBefore = device.stats.chunks
            const cpu = process.cpuUsage()
            const report = await runZkReader(runtime, job)
            const used = process.cpuUsage(cpu)
            const done: Job = {
              round,
              kind,
              transport,
              report,
              serverCpuSeconds: (used.user + used.system) / 1e6,
            }
            jobs.push(done)
            problems.push(...jobProblems(done, expected))
            if (kind === 'zk') {
              const chunks = device.stats.chunks - chunksBefore
              deviceChunks += chunks
              const want = READS * Math.ceil(DATASET_BYTES / CHUNK_BYTES[transport])
              if (chunks !== want)
                problems.push(
                  `zk ${transport} round ${round}: the device answered ${chunks} chunks, not ${want}`,
                )
              if (device.disabled)
                problems.push(`zk ${transport} round ${round}: the device was left disabled`)
              if (device.sessionCount !== 0)
                problems.push(`zk ${transport} round ${round}: ${device.sessionCount} sessions left open`)
            }
            const rate = (RECORDS * (READS - 1)) / warm(report).reduce((acc, t) => acc + t.seconds, 0)
            log(
              `round ${round}, ${kind} ${transport}: ${rate.toFixed(0)} records/s warm, first read ` +
                `${(report.timings[0]?.seconds ?? Number.NaN).toFixed(3)} s; RSS ${report.rssBeforeMB.toFixed(1)} MB ` +
                `before, peak ${report.peakMB.toFixed(1)} MB`,
            )
          }
        }
      }
      if (device.stats.badChecksums > 0)
        problems.push(`the device dropped ${device.stats.badChecksums} requests for a bad checksum`)
    } finally {
      await peer.stop()
      await device.stop()
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }

  const figures: Figure[] = []
  const notes: string[] = []
  const datasetMB = DATASET_BYTES / MB
  for (const transport of TRANSPORTS) {
    const zk = jobs.filter((j) => j.transport === transport && j.kind === 'zk')
    const raw = jobs.filter((j) => j.transport === transport && j.kind === 'raw')
    if (zk.length === 0 || raw.length === 0) continue
    const name = transport.toUpperCase()
    const zkRate = warmRate(zk)
    const rawRate = warmRate(raw)
    figures.push({
      name: `full read of ${RECORDS.toLocaleString('en-US')} records, ${name}`,
      value: { label: 'ZkClient.readAttendance from the emulator', value: zkRate, unit: 'records/s' },
      baseline: {
        label: 'plain request/response loop, same bytes and chunks',
        value: rawRate,
        unit: 'records/s',
      },
      ratio: ratio(zkRate, rawRate),
    })
    // The session of reads that reached the highest RSS: a peak is a worst case. Back to back, the
    // garbage of one read may not be collected before the next starts, so the session's peak is
    // above the first read's; the memory one read adds is taken from the first read alone.
    const worst = zk.reduce((a, b) => (b.report.peakMB > a.report.peakMB ? b : a))
    const first = zk.reduce((a, b) => (b.report.peakFirstReadMB > a.report.peakFirstReadMB ? b : a))
    const added = first.report.peakFirstReadMB - first.report.rssBeforeMB
    figures.push(
      {
        name: `reader peak RSS, ${READS} reads back to back, ${name}`,
        value: { label: 'reading process VmHWM', value: worst.report.peakMB, unit: 'MB' },
        baseline: {
          label: 'same process, connected, before reading',
          value: worst.report.rssBeforeMB,
          unit: 'MB',
        },
        ratio: ratio(worst.report.peakMB, worst.report.rssBeforeMB),
      },
      {
        name: `memory one full read adds, ${name}`,
        value: { label: 'VmHWM of the first read minus RSS before it', value: added, unit: 'MB' },
        baseline: { label: 'the dataset itself', value: datasetMB, unit: 'MB' },
        ratio: ratio(added, datasetMB),
      },
    )
    const perRead = (jobs: readonly Job[], f: (j: Job) => number[]) => fixed(jobs.flatMap(f), 3)
    const cpuPerWarmRead = (js: readonly Job[]) =>
      js.flatMap((j) => warm(j.report)).reduce((acc, t) => acc + t.cpuSeconds, 0) /
      js.flatMap((j) => warm(j.report)).length
    const serverCpuPerRead = (js: readonly Job[]) =>
      js.reduce((acc, j) => acc + j.serverCpuSeconds, 0) / (js.length * READS)
    notes.push(
      `${name}: warm reads took ${perRead(zk, (j) => warm(j.report).map((t) => t.seconds))} s (ZK) and ` +
        `${perRead(raw, (j) => warm(j.report).map((t) => t.seconds))} s (raw loop); the first read of each ` +
        `fresh process ${perRead(zk, (j) => [j.report.timings[0]?.seconds ?? Number.NaN])} s (ZK) and ` +
        `${perRead(raw, (j) => [j.report.timings[0]?.seconds ?? Number.NaN])} s (raw). CPU per warm read, all ` +
        `threads of the reader: ${cpuPerWarmRead(zk).toFixed(3)} s (ZK), ${cpuPerWarmRead(raw).toFixed(3)} s ` +
        `(raw); of the serving process (this one) per read, process start included: ` +
        `${serverCpuPerRead(zk).toFixed(3)} s (emulator), ${serverCpuPerRead(raw).toFixed(3)} s (raw peer).`,
      `${name} memory: per session of ${READS} reads, RSS before / peak after the first read / peak after all, ` +
        `MB: ZK ${zk.map((j) => `${j.report.rssBeforeMB.toFixed(1)} / ${j.report.peakFirstReadMB.toFixed(1)} / ${j.report.peakMB.toFixed(1)}`).join('; ')}; ` +
        `raw ${raw.map((j) => `${j.report.rssBeforeMB.toFixed(1)} / ${j.report.peakFirstReadMB.toFixed(1)} / ${j.report.peakMB.toFixed(1)}`).join('; ')}. ` +
        `V8 heap used right after the first ZK read, its result held: ${fixed(
          zk.map((j) => j.report.heapUsedMB),
          1,
        )} MB (array buffers ${fixed(
          zk.map((j) => j.report.arrayBuffersMB),
          1,
        )} MB).`,
    )
  }
  if (jobs.some((j) => !j.report.peakReset))
    notes.push(
      'The kernel refused to reset VmHWM (proc(5) clear_refs 5): the peaks also cover the reader start-up.',
    )
  notes.push(
    `The emulator's log of ${RECORDS.toLocaleString('en-US')} records was filled in ${fillSeconds.toFixed(2)} s ` +
      `and answered ${deviceChunks} chunks in all.`,
  )

  const chunks = TRANSPORTS.map(
    (t) => `${t.toUpperCase()} ${CHUNK_BYTES[t]} bytes (${Math.ceil(DATASET_BYTES / CHUNK_BYTES[t])} chunks)`,
  ).join(', ')
  return {
    name: 'agent-zk-read',
    title: `Agent: full read of a ${RECORDS.toLocaleString('en-US')}-record ZK attendance log, TCP and UDP`,
    method:
      `The terminal emulator (agent/simulator/zk-device) in the benchmark process holds ${RECORDS.toLocaleString('en-US')} ` +
      `${RECORD_BYTES}-byte records (a full log: 977 PINs, a punch every five minutes); the agent's ZkClient ` +
      `reads it in a child process of its own (${command}), so the reader's RSS is not the emulator's, which ` +
      'holds the log too. Each reading process connects, then makes ' +
      `${READS} full reads in a row with readAttendance() (CMD_DISABLEDEVICE, CMD_GET_FREE_SIZES, ` +
      `CMD_DATA_WRRQ, the ${DATASET_BYTES.toLocaleString('en-US')}-byte dataset in CMD_DATA_RDY chunks of the ` +
      `client's size: ${chunks}; over UDP each chunk comes in ${UDP_DATAGRAM_BYTES}-byte CMD_DATA packets; then ` +
      'CMD_FREE_DATA and CMD_ENABLEDEVICE, every record decoded), and closes. The first read of each process is ' +
      'cold; records/s is over the warm ones, the steady state of an agent that must read the whole log at ' +
      'every poll (the device keeps no cursor). Every read must return every record, none malformed, the first ' +
      "and last equal to the device's. Baseline for speed: the transport ceiling, a plain request/response loop " +
      'in the same kind of child process against a peer in this process (as the emulator is), moving the same ' +
      'bytes in the same chunk sizes (and over UDP the same datagram size), one request at a time, keeping ' +
      'and joining the bytes as the client does, with no framing, checksum or decoding; the ratio is the share ' +
      'of that ceiling the protocol, the client and the emulator leave. Memory: VmHWM of the reading process ' +
      "(/proc), reset to the current RSS once connected (proc(5) clear_refs), so the peak is the reads'. " +
      'Peak RSS is over the whole session of reads (the highest session of the run), against the same ' +
      "process's RSS just before its first read (a connected, idle client). What one read adds is the peak " +
      'right after the first read, its result still held, minus that RSS, against the dataset size: bytes of ' +
      `memory per byte of log. ${settings.rounds} rounds, each a raw and a ZK process per transport, alternating.`,
    startedAt: startedAt.toISOString(),
    elapsedSeconds: (Date.now() - startedAt.getTime()) / 1000,
    figures,
    problems,
    notes,
    details: { records: RECORDS, datasetBytes: DATASET_BYTES, reads: READS, jobs },
  }
}

export const agentZkReadBench: Benchmark = { name: 'agent-zk-read', run }
