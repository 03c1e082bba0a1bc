/**
 * Concurrent calls served by one run over all of them, as a database's group commit serves
 * concurrent transactions: a call made while no run is under way starts one at the next turn of the
 * event loop (so the calls of this turn join it); calls made during a run wait for it, then go
 * together in the next. Nothing waits for a timer, so a lone call is served at once, and under load
 * each run takes everything that arrived during the one before (up to `max`).
 */
export class BatchedCall<In, Out> {
  private waiting: { input: In; resolve: (out: Out) => void; reject: (err: unknown) => void }[] = []
  private running = false

  constructor(
    /** Answers the inputs in their order, one answer each. */
    private readonly run: (inputs: In[]) => Promise<Out[]>,
    private readonly max = 500,
  ) {}

  call(input: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.waiting.push({ input, resolve, reject })
      if (!this.running) {
        this.running = true
        setImmediate(() => void this.drain())
      }
    })
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.max)
      try {
        const outs = await this.run(batch.map((c) => c.input))
        if (outs.length !== batch.length)
          throw new Error(`a batch of ${batch.length} got ${outs.length} answers`)
        for (const [i, c] of batch.entries()) c.resolve(outs[i] as Out)
      } catch (err) {
        for (const c of batch) c.reject(err)
      }
    }
    this.running = false
  }
}
