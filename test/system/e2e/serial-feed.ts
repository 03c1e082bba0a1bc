/**
 * The chaos tests' serial device: a steady stream of ATTLOG lines, two a second while it
 * runs. A serial line has no acknowledgement: a line the agent has read but not yet spooled when it
 * is killed is gone, as it would be from a real reader, and a full spool makes the agent hold a
 * line and stop reading. So the feed is paused before each agent kill, and held (paused until
 * released) while the spool may fill; it writes only while the agent runs with its port open.
 * pause() waits until the agent says it has spooled every line written to it, so each line written
 * counts as acknowledged.
 */

import { waitFor } from '../../support/e2e-kit.js'
import type { AttlogSerialDevice } from './attlog-serial-device.js'

export class SerialFeed {
  private timer: NodeJS.Timeout | undefined
  private writing: Promise<void> = Promise.resolve()
  /** Lines written to the agent process running now (its status counts those it spooled). */
  private writtenThisRun = 0
  private held = false

  constructor(
    readonly device: AttlogSerialDevice,
    private readonly status: () => Promise<{ state: string; punches: number } | undefined>,
  ) {}

  open(): Promise<void> {
    return this.device.open()
  }

  /** Writes again (unless held), once the agent has its port open. */
  async resume(): Promise<void> {
    if (this.timer || this.held) return
    await waitFor(
      async () => (await this.status())?.state === 'connected',
      'the agent to open the serial port',
    )
    this.timer = setInterval(() => {
      this.writing = this.writing.then(async () => {
        await this.device.write(2)
        this.writtenThisRun += 2
      })
    }, 1000)
  }

  /** Stops writing, and waits until the agent has spooled every line written to it. */
  async pause(): Promise<void> {
    clearInterval(this.timer)
    this.timer = undefined
    await this.writing
    let spooled = 0
    await waitFor(
      async () => {
        spooled = (await this.status())?.punches ?? 0
        return spooled >= this.writtenThisRun
      },
      'the agent to spool every serial line written',
      { describe: () => ({ written: this.writtenThisRun, spooled }) },
    )
  }

  /** Paused, and kept paused across agent restarts until release(). */
  async hold(): Promise<void> {
    this.held = true
    await this.pause()
  }

  async release(): Promise<void> {
    this.held = false
    await this.resume()
  }

  /** A new agent process counts from 0; writing resumes (unless held) once it has the port open. */
  async agentRestarted(): Promise<void> {
    this.writtenThisRun = 0
    await this.resume()
  }

  async close(): Promise<void> {
    clearInterval(this.timer)
    this.timer = undefined
    await this.writing.catch(() => {})
    await this.device.close()
  }
}
