import http from 'node:http'
import { median } from '../support/median.js'
import { cpuSeconds, mainThreadSchedule } from './agent-proc-stats.js'

/** Asia/Kolkata, the site's zone (the agent's default): terminals keep local wall time. */
const IST_OFFSET_MS = 330 * 60_000
/** Employees enrolled on each terminal; terminal i has PINs i·1000+1 … i·1000+1000. */
const PINS_PER_TERMINAL = 1000
/** How far back a terminal's log starts: 21.6 million records of room before "now" per terminal. */
const LOG_STARTS_HOURS_AGO = 6
/** The newest record must stay this far behind the clock: never in the future, even by a little. */
const NEWEST_MARGIN_MS = 60_000
/** A request without its answer for this long is a problem (the agent's own limit is 60 s). */
const REQUEST_TIMEOUT_MS = 30_000
/** Long enough for the last POSTs to be answered by a busy agent, short enough to show up as a problem. */
const SETTLE_TIMEOUT_MS = 30_000

/**
 * A terminal's attendance log, made up as it is read: record k is the employee with PIN
 * `i·1000 + k mod 1000 + 1` at second ⌊k / 1000⌋ of a log starting six hours ago, so every line is
 * a distinct employee and second (PIN ranges do not overlap between terminals), the lines of a
 * terminal are in time order, the times are in the past and after 2020 (site.clockFloor), and the
 * statuses alternate 0 (check-in) and 1 (check-out) from one second to the next: real punches the
 * agent spools, none a dead letter. Kept across phases, so a terminal never sends a record twice.
 */
export class TerminalLog {
  /** Records read so far; the upload's Stamp. */
  private made = 0
  private second = -1
  private wallTime = ''
  private readonly startMs: number

  constructor(
    readonly serialNumber: string,
    private readonly index: number,
    now = Date.now(),
  ) {
    this.startMs = Math.floor((now - LOG_STARTS_HOURS_AGO * 3_600_000) / 1000) * 1000
  }

  /** The next `count` records as ATTLOG upload lines (LF), and the Stamp after them. */
  next(count: number): { body: Buffer; stamp: number } {
    let text = ''
    for (let n = 0; n < count; n++) {
      const k = this.made++
      const second = Math.floor(k / PINS_PER_TERMINAL)
      if (second !== this.second) {
        const at = this.startMs + second * 1000
        if (at > Date.now() - NEWEST_MARGIN_MS)
          throw new Error(`terminal ${this.serialNumber} ran out of past: record ${k} would be at ${at}`)
        this.second = second
        this.wallTime = new Date(at + IST_OFFSET_MS).toISOString().slice(0, 19).replace('T', ' ')
      }
      const pin = this.index * PINS_PER_TERMINAL + (k % PINS_PER_TERMINAL) + 1
      // PIN, time, status, verify (1: fingerprint), workcode, two reserved fields.
      text += `${pin}\t${this.wallTime}\t${second % 2}\t1\t0\t0\t0\n`
    }
    return { body: Buffer.from(text, 'latin1'), stamp: this.made }
  }
}

export interface AdmsPhase {
  terminals: number
  /** Records per POST. */
  batch: number
  /** POSTs answered `OK: <n>` between the phase's start and its end. */
  posts: number
  /** Records those POSTs acknowledged. */
  records: number
  seconds: number
  /** records / seconds. */
  perSecond: number
  /** Share of one core this (load generating) process used meanwhile: near 1, it may be the limit. */
  generatorCpu: number
  /** Cores the server's process used meanwhile (all its threads, from /proc). */
  serverCpu: number
  /**
   * Shares of the phase the server's main thread spent on a CPU and waiting for one (NaN where
   * /proc does not tell): running + waiting near 1 means its event loop was the limit, and a large
   * waiting share that the machine's cores were taken by others.
   */
  serverMainRunning: number
  serverMainWaiting: number
  /** From sending a POST to the end of its answer, over the POSTs of the phase, ms. */
  medianMs: number
  p99Ms: number
}

interface Reply {
  status: number
  body: string
}

const DEVICE_HEADERS = {
  'Content-Type': 'text/plain',
  'User-Agent': 'iClock Proxy/1.09',
  Accept: '*/*',
  Connection: 'close',
} as const

/** One request as push firmware makes it: a connection of its own (no pool), closed after the answer. */
function request(url: URL, method: 'GET' | 'POST', path: string, body?: Buffer): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...DEVICE_HEADERS }
    if (body) headers['Content-Length'] = body.length
    else delete headers['Content-Type']
    const req = http.request({
      host: url.hostname,
      port: url.port,
      method,
      path,
      headers,
      agent: false,
      timeout: REQUEST_TIMEOUT_MS,
    })
    req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)))
    req.on('error', reject)
    req.on('response', (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('error', reject)
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      )
    })
    req.end(body)
  })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] as number
}

/**
 * Simulated push terminals uploading attendance to one server: each a loop that posts a batch of
 * its log (`POST /iclock/cdata?SN=..&table=ATTLOG&Stamp=..`), waits for the answer, checks that it
 * is exactly `OK: <n>` for the n records sent, and posts the next; no pipelining, a new connection
 * per request. Anything but that answer is an error (counted, the first one kept), after which the
 * terminal waits 100 ms and carries on with its next batch, so a broken server shows up as errors
 * rather than a busy loop. The rate is the server's: a terminal never waits for anything but it.
 */
export class AdmsTerminals {
  /** Records acknowledged since the start, in every phase: what the server took responsibility for. */
  totalRecords = 0
  errors = 0
  firstError: string | undefined

  constructor(
    private readonly url: URL,
    private readonly logs: readonly TerminalLog[],
    /** The server's process, whose CPU each phase reports. */
    private readonly serverPid: number,
  ) {}

  private fail(message: string): void {
    this.errors++
    this.firstError ??= message
  }

  /**
   * The handshake a terminal makes when it starts (`GET /iclock/cdata?SN=..&options=all`): each must
   * be answered 200 with the options for its own serial number, or the serial numbers are not
   * those the server was configured with. Returns the problems.
   */
  async handshake(): Promise<string[]> {
    const problems: string[] = []
    await Promise.all(
      this.logs.map(async ({ serialNumber }) => {
        const reply = await request(
          this.url,
          'GET',
          `/iclock/cdata?SN=${serialNumber}&options=all&pushver=2.4.1&language=69`,
        )
        if (reply.status !== 200 || !reply.body.startsWith(`GET OPTION FROM: ${serialNumber}\n`))
          problems.push(
            `the handshake of ${serialNumber} was answered ${reply.status} ${JSON.stringify(reply.body.slice(0, 80))}`,
          )
      }),
    )
    return problems
  }

  /**
   * The first `terminals` terminals upload batches of `batch` records for `seconds`; POSTs answered
   * meanwhile are counted. Then they stop posting and the POSTs in flight are waited for, so the
   * next phase (or the other server) starts from rest.
   */
  async run(seconds: number, terminals: number, batch: number): Promise<AdmsPhase> {
    if (terminals > this.logs.length)
      throw new Error(`${terminals} terminals, but only ${this.logs.length} logs`)
    const latencies: number[] = []
    let running = true
    let posts = 0
    let records = 0
    const expected = `OK: ${batch}`
    const loop = async (log: TerminalLog) => {
      const path = `/iclock/cdata?SN=${log.serialNumber}&table=ATTLOG&Stamp=`
      while (running) {
        const { body, stamp } = log.next(batch)
        const sent = performance.now()
        try {
          const reply = await request(this.url, 'POST', `${path}${stamp}`, body)
          if (reply.status !== 200 || reply.body !== expected) {
            this.fail(
              `${log.serialNumber}: an upload of ${batch} records was answered ${reply.status} ` +
                `${JSON.stringify(reply.body.slice(0, 120))}, not 200 "${expected}"`,
            )
            await sleep(100)
            continue
          }
        } catch (err) {
          this.fail(`${log.serialNumber}: ${err instanceof Error ? err.message : String(err)}`)
          await sleep(100)
          continue
        }
        this.totalRecords += batch
        if (!running) continue
        posts++
        records += batch
        latencies.push(performance.now() - sent)
      }
    }
    const cpuBefore = process.cpuUsage()
    const serverBefore = cpuSeconds(this.serverPid)
    const scheduleBefore = mainThreadSchedule(this.serverPid)
    const started = performance.now()
    const loops = Promise.all(this.logs.slice(0, terminals).map(loop))
    // A loop that throws (a log out of past) is a broken benchmark: fail now, not after the phase.
    let broken: unknown
    loops.catch((err: unknown) => {
      broken = err
    })
    await sleep(seconds * 1000)
    running = false
    const elapsed = (performance.now() - started) / 1000
    const cpu = process.cpuUsage(cpuBefore)
    const serverCpu = (cpuSeconds(this.serverPid) - serverBefore) / elapsed
    const scheduleAfter = mainThreadSchedule(this.serverPid)
    const share = (f: (s: { running: number; waiting: number }) => number) =>
      scheduleBefore && scheduleAfter ? (f(scheduleAfter) - f(scheduleBefore)) / elapsed : Number.NaN
    const measured = { posts, records }
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      loops.catch(() => {}),
      new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          this.fail(`POSTs still unanswered ${SETTLE_TIMEOUT_MS} ms after the phase`)
          resolve()
        }, SETTLE_TIMEOUT_MS)
      }),
    ])
    clearTimeout(timer)
    if (broken) throw broken
    latencies.sort((a, b) => a - b)
    return {
      terminals,
      batch,
      posts: measured.posts,
      records: measured.records,
      seconds: elapsed,
      perSecond: measured.records / elapsed,
      generatorCpu: (cpu.user + cpu.system) / 1e6 / elapsed,
      serverCpu,
      serverMainRunning: share((s) => s.running),
      serverMainWaiting: share((s) => s.waiting),
      medianMs: median(latencies),
      p99Ms: percentile(latencies, 0.99),
    }
  }
}
