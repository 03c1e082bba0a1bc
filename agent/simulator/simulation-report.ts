import { formatInZone } from '../../shared/time.js'
import type { ScriptedPunch } from './punch-script.js'

interface SimulationReportOptions {
  /** Where lines go (stdout). */
  write: (text: string) => void
  /** One JSON object per line instead of text. */
  json: boolean
  /** A line per punch; when false (a high --rate), a progress line now and then instead. */
  perPunch: boolean
  /** "acknowledged" (MQTT PUBACK) or "written" (serial): what the text calls a delivered punch. */
  deliveredAs: 'acknowledged' | 'written'
  timeZone: string
  /** ms; the clock by default. */
  now?: () => number
}

interface SimulationTotals {
  sent: number
  /** PUBACKed (MQTT) or written to the port (serial). */
  acknowledged: number
  seconds: number
}

/**
 * What `hajri-agent simulate` prints on stdout: a line per punch once it is delivered (or
 * has failed), progress lines instead at high rates, and the totals at the end. In JSON every
 * object has an `event` ("punch", "progress", "summary"); `acknowledged` means PUBACKed over MQTT
 * and written to the port over serial, which has no acknowledgement.
 */
export class SimulationReport {
  sent = 0
  acknowledged = 0
  private readonly now: () => number
  private readonly startedAt: number
  private last: { at: number; acknowledged: number }

  /** A line per punch (else progress lines, which the run asks for). */
  get perPunch(): boolean {
    return this.options.perPunch
  }

  constructor(private readonly options: SimulationReportOptions) {
    this.now = options.now ?? Date.now
    this.startedAt = this.now()
    this.last = { at: this.startedAt, acknowledged: 0 }
  }

  punchSent(): void {
    this.sent++
  }

  punchDelivered(punch: ScriptedPunch): void {
    this.acknowledged++
    if (this.options.perPunch) this.punchLine(punch, undefined)
  }

  punchFailed(punch: ScriptedPunch, err: Error): void {
    if (this.options.perPunch) this.punchLine(punch, err)
  }

  /** Totals so far and the rate since the last progress line. */
  progress(): void {
    const at = this.now()
    const perSecond = Math.round(
      ((this.acknowledged - this.last.acknowledged) * 1000) / Math.max(1, at - this.last.at),
    )
    this.last = { at, acknowledged: this.acknowledged }
    if (this.options.json)
      this.line({ event: 'progress', sent: this.sent, acknowledged: this.acknowledged, perSecond })
    else
      this.options.write(
        `progress: ${this.sent} sent, ${this.acknowledged} ${this.options.deliveredAs}, ${perSecond}/s\n`,
      )
  }

  summary(): SimulationTotals {
    const seconds = Math.round(this.now() - this.startedAt) / 1000
    const totals = { sent: this.sent, acknowledged: this.acknowledged, seconds }
    const perSecond = seconds > 0 ? Math.round(this.acknowledged / seconds) : this.acknowledged
    if (this.options.json) this.line({ event: 'summary', ...totals, perSecond })
    else
      this.options.write(
        `summary: ${this.sent} sent, ${this.acknowledged} ${this.options.deliveredAs} in ${seconds.toFixed(seconds < 10 ? 2 : 1)} s` +
          ` (${perSecond}/s)\n`,
      )
    return totals
  }

  private punchLine(punch: ScriptedPunch, err: Error | undefined): void {
    const punchedAt = formatInZone(punch.at, this.options.timeZone)
    if (this.options.json) {
      this.line({
        event: 'punch',
        employeeCode: punch.employeeCode,
        punchType: punch.punchType,
        punchedAt,
        acknowledged: err === undefined,
        ...(err ? { error: err.message } : {}),
      })
      return
    }
    const outcome = err ? `not ${this.options.deliveredAs}: ${err.message}` : this.options.deliveredAs
    this.options.write(`sent ${punch.employeeCode} ${punch.punchType} ${punchedAt} (${outcome})\n`)
  }

  private line(value: object): void {
    this.options.write(`${JSON.stringify(value)}\n`)
  }
}
