import { fromNaiveMs, type LocalTimeText, naiveMs, toWallTime, type WallTime } from './zk-time.js'

/**
 * The terminal's clock: a wall time with no zone that runs with the host clock (`now`, which tests
 * control) from wherever it was last set. Setting it may move it backwards, as a person at the
 * keypad or CMD_SET_TIME can.
 */
export class ZkWallClock {
  /** Wall time (on the naive scale) minus host time, ms. */
  private offsetMs: number

  constructor(
    private readonly hostNow: () => number,
    initial?: WallTime | LocalTimeText,
  ) {
    // Without a setting, the host's UTC wall time: deterministic whatever the host's zone.
    this.offsetMs = initial === undefined ? 0 : naiveMs(toWallTime(initial)) - hostNow()
  }

  /** The wall time the device shows now, to the second. */
  now(): WallTime {
    return fromNaiveMs(Math.floor((this.hostNow() + this.offsetMs) / 1000) * 1000)
  }

  set(time: WallTime | LocalTimeText): void {
    this.offsetMs = naiveMs(toWallTime(time)) - this.hostNow()
  }
}
