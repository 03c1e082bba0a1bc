/**
 * A call that many events ask for and one run serves, made at most once per `gapMs`: asked for when
 * the last run was longer ago than that, it runs at once; asked for sooner, one run is set for the
 * end of the gap, and every request until then is folded into it. Nothing asked for is dropped: the
 * run after a request always comes, at most `gapMs` later.
 */
export class CoalescedCall {
  private lastRunAt = Number.NEGATIVE_INFINITY
  private timer: ReturnType<typeof setTimeout> | undefined

  constructor(
    private readonly run: () => void,
    private readonly gapMs: number,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  request(): void {
    if (this.timer !== undefined) return
    const wait = this.lastRunAt + this.gapMs - this.clock()
    if (wait <= 0) {
      this.runNow()
      return
    }
    this.timer = setTimeout(() => this.runNow(), wait)
    // A nudge never holds a process open: one that exits has no one left to nudge.
    this.timer.unref?.()
  }

  /** Drops a run that is waiting for its gap (at shutdown). */
  cancel(): void {
    clearTimeout(this.timer)
    this.timer = undefined
  }

  private runNow(): void {
    this.timer = undefined
    this.lastRunAt = this.clock()
    this.run()
  }
}
