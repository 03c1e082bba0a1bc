import { Writable } from 'node:stream'

/** A destination for a pino logger that keeps every line it writes, parsed. */
export class LogLines extends Writable {
  readonly all: Record<string, unknown>[] = []
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) if (line) this.all.push(JSON.parse(line))
    done()
  }
}
