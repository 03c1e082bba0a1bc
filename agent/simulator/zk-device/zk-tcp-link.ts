import type { Socket } from 'node:net'
import type { ZkDeviceFaults } from './zk-device-options.js'

/**
 * Lets the event loop turn twice: a client in the same process then reads what was written before
 * as a read of its own. Real firmware is slower than the network, so each packet of a reply reaches
 * the client alone; node-zklib-derived clients even depend on it (they take one packet per read).
 */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)))
}

/** Writes a TCP client's frames as the faults in force say: one write each, split, or merged. */
export class ZkTcpLink {
  private queue: Buffer[] = []
  private writing: Promise<void> = Promise.resolve()

  constructor(
    readonly socket: Socket,
    private readonly faults: ZkDeviceFaults,
    private readonly random: () => number,
  ) {}

  get open(): boolean {
    return !this.socket.destroyed && this.socket.writable
  }

  /** Resolves once the frames are handed to the socket (in order with everything sent before). */
  send(frames: Buffer[]): Promise<void> {
    this.queue.push(...frames)
    this.writing = this.writing.then(() => this.flush())
    return this.writing
  }

  private async flush(): Promise<void> {
    if (this.queue.length === 0) return
    if (this.faults.mergeTcpReplies) {
      // Everything queued by the end of this turn leaves in one write.
      await new Promise((resolve) => setImmediate(resolve))
      const merged = Buffer.concat(this.queue.splice(0))
      if (this.open) this.socket.write(merged)
      return
    }
    while (this.queue.length > 0) {
      const frame = this.queue.shift()!
      if (!this.open) continue
      const max = this.faults.splitTcpReplies
      if (max > 0) {
        for (let at = 0; at < frame.length && this.open; ) {
          const n = 1 + Math.floor(this.random() * max)
          this.socket.write(frame.subarray(at, at + n))
          at += n
          await nextTurn()
        }
      } else {
        this.socket.write(frame)
        await nextTurn()
      }
    }
  }
}
