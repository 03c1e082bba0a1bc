/**
 * What the agent-zk-read benchmark and its reading child (agent-zk-reader.ts) tell each other:
 * the job on the child's command line as JSON, its report over the IPC channel. Types only, so the
 * child compiles without the parent's code.
 */

/** `zk`: ZkClient.readAttendance() from the emulator; `raw`: the plain request/response loop. */
export type ZkReadKind = 'zk' | 'raw'

export interface ZkReaderJob {
  kind: ZkReadKind
  transport: 'tcp' | 'udp'
  host: string
  port: number
  /** Full reads in a row on one connection: the first is the cold one, the rest are timed warm. */
  reads: number
  /** Bytes a raw read moves, and per request (raw; the peer picks the datagram size). */
  datasetBytes: number
  chunkBytes: number
}

/** One full read as the child timed it. */
export interface ZkReadTiming {
  seconds: number
  /** CPU seconds of the whole child (all its threads) during the read. */
  cpuSeconds: number
}

export interface ZkReaderReport {
  type: 'done'
  timings: ZkReadTiming[]
  /** VmRSS once connected, before the first read, in MB (10^6 bytes, as agent-proc-stats.ts). */
  rssBeforeMB: number
  /** VmHWM right after the first read (with its result still held). */
  peakFirstReadMB: number
  /** VmHWM after the last read: the highest RSS of the whole session of reads. */
  peakMB: number
  /**
   * Whether the peak could be reset to the current RSS once connected (proc(5) clear_refs 5): if
   * not, both peaks also cover the process's start-up.
   */
  peakReset: boolean
  /** process.memoryUsage() right after the first read, in MB. */
  heapUsedMB: number
  arrayBuffersMB: number
  /** What each read returned, for the parent to check the reads read what the device holds. */
  recordsRead: number[]
  malformed: number[]
  recordBytes: (number | null)[]
  /** The first and last record of the first read, as `uid userId verify state YYYY-MM-DDTHH:mm:ss`. */
  firstRecord: string | null
  lastRecord: string | null
  /** Bytes of each raw read. */
  bytesRead: number[]
}

export type ZkReaderMessage = ZkReaderReport | { type: 'failed'; error: string }
