/**
 * The HR backend's side of the soak: steady reads of the public API with an API key, as a payroll
 * sync does, while punches stream in. One round lists the employees page by page, reads one of
 * them, lists the punches (a few pages, and those since a recent punch time) and reads one punch back.
 * Every answer is counted by status: the soak allows no 5xx, and no request left unanswered.
 */
import { sleep } from '../support/e2e-kit.js'

export interface ReaderCounts {
  requests: number
  /** Answers by HTTP status. */
  byStatus: Record<string, number>
  /** Requests that got no answer in time, or whose connection failed. */
  failures: number
  /** The first few unexpected answers, for the report. */
  samples: string[]
}

const API = '/api/public/v1'

export class ApiReader {
  readonly counts: ReaderCounts = { requests: 0, byStatus: {}, failures: 0, samples: [] }
  private stopped = false
  private loop: Promise<void> | undefined

  constructor(
    private readonly options: {
      baseUrl: string
      apiKey: string
      /** Pause between rounds. */
      intervalMs: number
      /** Pages of punches each round reads. */
      punchPages: number
      /** A recent punch time (RFC 3339): the punches from it on are read, as an incremental sync does. */
      recentFrom: () => string
    },
  ) {}

  start(): void {
    this.loop ??= this.run()
  }

  async stop(): Promise<void> {
    this.stopped = true
    await this.loop
  }

  private async get(path: string): Promise<{ status: number; body: unknown } | undefined> {
    this.counts.requests++
    try {
      const response = await fetch(`${this.options.baseUrl}${path}`, {
        headers: { authorization: `Bearer ${this.options.apiKey}` },
        signal: AbortSignal.timeout(30_000),
      })
      const text = await response.text()
      const key = String(response.status)
      this.counts.byStatus[key] = (this.counts.byStatus[key] ?? 0) + 1
      if (response.status !== 200 && this.counts.samples.length < 5) {
        this.counts.samples.push(`GET ${path}: ${response.status} ${text.slice(0, 200)}`)
      }
      return { status: response.status, body: response.status === 200 ? JSON.parse(text) : undefined }
    } catch (err) {
      this.counts.failures++
      if (this.counts.samples.length < 5) this.counts.samples.push(`GET ${path}: ${(err as Error).message}`)
      return undefined
    }
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      // The directory, page by page.
      let cursor: string | null = null
      let someCode: string | undefined
      do {
        const query: string = `limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
        const page = (await this.get(`${API}/employees?${query}`))?.body as
          | { data: { employeeCode: string }[]; nextCursor: string | null }
          | undefined
        someCode ??= page?.data[Math.floor(Math.random() * page.data.length)]?.employeeCode
        cursor = page?.nextCursor ?? null
      } while (cursor && !this.stopped)
      if (someCode) await this.get(`${API}/employees/${encodeURIComponent(someCode)}`)

      // The punch log: its first pages, and what came in over the last minute.
      cursor = null
      let somePunch: string | undefined
      for (let i = 0; i < this.options.punchPages && !this.stopped; i++) {
        const query: string = `limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
        const page = (await this.get(`${API}/attendance/punches?${query}`))?.body as
          | { data: { id: string }[]; nextCursor: string | null }
          | undefined
        somePunch ??= page?.data[0]?.id
        cursor = page?.nextCursor ?? null
        if (!cursor) break
      }
      const since = encodeURIComponent(this.options.recentFrom())
      await this.get(`${API}/attendance/punches?limit=50&from=${since}`)
      if (somePunch) await this.get(`${API}/attendance/punches/${somePunch}`)
      await sleep(this.options.intervalMs)
    }
  }
}
