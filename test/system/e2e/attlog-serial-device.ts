/**
 * A ZKTeco/eSSL reader on a serial cable: it writes ATTLOG lines
 * (docs/decisions/0028-zk-attlog-and-status-codes.md, `PIN\tYYYY-MM-DD HH:mm:ss\tstatus\tverify\tworkcode`)
 * on the device's end of a pty pair, in the site's time zone, and remembers each punch with the id the agent
 * derives from it.
 */
import { type FileHandle, open } from 'node:fs/promises'
import { punchId } from '../../../agent/punch/punch-id.js'
import { sleep } from '../../support/e2e-kit.js'
import type { SentPunch } from './judge-punch-webhooks.js'

/** Asia/Kolkata, the site's zone in writeAgentConfig: UTC+05:30 all year (no DST). */
const SITE_OFFSET_MS = 330 * 60_000

export class AttlogSerialDevice {
  readonly sent: SentPunch[] = []
  private host: FileHandle | undefined

  constructor(
    private readonly options: {
      /** The device's end of the pty pair. */
      hostPath: string
      deviceId: string
      employeeCodes: readonly string[]
      /** The first punch's time (whole minutes); each next one is a minute later. */
      firstPunchMs: number
    },
  ) {}

  async open(): Promise<void> {
    this.host = await open(this.options.hostPath, 'r+')
  }

  /**
   * Writes `count` more lines, ten at a time, each ten cut across three writes so frames also arrive
   * split over reads. Each employee's punches go IN, OUT, IN... (status 0 and 1).
   */
  async write(count: number): Promise<void> {
    const host = this.host
    if (!host) throw new Error('the serial device is not open')
    const { deviceId, employeeCodes, firstPunchMs } = this.options
    const end = this.sent.length + count
    while (this.sent.length < end) {
      let text = ''
      for (let i = 0; i < 10 && this.sent.length < end; i++) {
        const seq = this.sent.length
        const employeeCode = employeeCodes[seq % employeeCodes.length] as string
        const status = Math.floor(seq / employeeCodes.length) % 2
        const punchType = status === 0 ? 'IN' : 'OUT'
        const punchedAtMs = firstPunchMs + seq * 60_000
        this.sent.push({
          via: 'serial',
          deviceId,
          employeeCode,
          punchType,
          punchedAtMs,
          externalId: punchId(deviceId, employeeCode, punchedAtMs * 1000, punchType),
        })
        const local = new Date(punchedAtMs + SITE_OFFSET_MS).toISOString().slice(0, 19).replace('T', ' ')
        text += `${employeeCode}\t${local}\t${status}\t1\t0\r\n`
      }
      const third = Math.ceil(text.length / 3)
      for (let at = 0; at < text.length; at += third) await host.write(text.slice(at, at + third))
      await sleep(20)
    }
  }

  async close(): Promise<void> {
    const host = this.host
    this.host = undefined
    await host?.close()
  }
}
