import { Transform, type TransformCallback } from 'node:stream'
import { DEFAULT_MAX_FRAME_BYTES, SampledRun, type SerialFrame } from './serial-frame.js'

const CR = 0x0d

interface SerialLineParserOptions {
  /** What ends a record (`serial.framing.delimiter`, default "\n"). */
  delimiter: string | Buffer
  /** A longer line is malformed, and is counted rather than held in memory. */
  maxFrameBytes?: number
}

/**
 * Line framing: bytes in, SerialFrame objects out. A CR
 * before the delimiter is dropped (the schema promises it, and devices send CR-LF). Empty lines
 * carry nothing and are skipped. What is left when the stream ends was cut off (a disconnect) and
 * comes out as a partial frame, so the next port's bytes are never glued to it.
 */
export class SerialLineParser extends Transform {
  private readonly delimiter: Buffer
  private readonly maxFrameBytes: number
  /** The start of the current line, bounded by maxFrameBytes plus a CR and a split delimiter. */
  private pending: Buffer = Buffer.alloc(0)
  /** Set while skipping the rest of a line that is already too long. */
  private oversize: SampledRun | undefined

  constructor(options: SerialLineParserOptions) {
    super({ readableObjectMode: true, readableHighWaterMark: 16 })
    this.delimiter = Buffer.from(options.delimiter)
    if (this.delimiter.length === 0) throw new Error('the line delimiter is empty')
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk
    let start = 0
    let end = data.indexOf(this.delimiter, start)
    while (end !== -1) {
      this.endLine(data.subarray(start, end))
      start = end + this.delimiter.length
      end = data.indexOf(this.delimiter, start)
    }
    const rest = data.subarray(start)
    // The start of a delimiter split across chunks, or a CR that may come before it, stays pending
    // either way, so how a line was chunked never changes what is counted.
    const keep = Math.min(rest.length, this.delimiter.length)
    if (!this.oversize && rest.length > this.maxFrameBytes + this.delimiter.length) {
      // Too long already, whatever ends it: count the rest instead of keeping it.
      this.oversize = new SampledRun()
    }
    if (this.oversize) {
      this.oversize.add(rest.subarray(0, rest.length - keep))
      this.pending = Buffer.from(rest.subarray(rest.length - keep))
    } else {
      this.pending = Buffer.from(rest)
    }
    callback()
  }

  override _flush(callback: TransformCallback): void {
    const line = withoutCr(this.pending)
    if (this.oversize) {
      this.oversize.add(line)
      this.pushOversize(this.oversize)
    } else if (line.length > 0) {
      const run = new SampledRun()
      run.add(line)
      this.push({
        type: 'malformed',
        reason: 'partial',
        length: run.length,
        sample: run.sample(),
      } satisfies SerialFrame)
    }
    this.pending = Buffer.alloc(0)
    this.oversize = undefined
    callback()
  }

  private endLine(line: Buffer): void {
    const body = withoutCr(line)
    if (this.oversize) {
      this.oversize.add(body)
      this.pushOversize(this.oversize)
      this.oversize = undefined
      return
    }
    if (body.length === 0) return
    if (body.length > this.maxFrameBytes) {
      const run = new SampledRun()
      run.add(body)
      this.pushOversize(run)
      return
    }
    this.push({ type: 'frame', bytes: Buffer.from(body) } satisfies SerialFrame)
  }

  private pushOversize(run: SampledRun): void {
    this.push({
      type: 'malformed',
      reason: 'oversize',
      length: run.length,
      sample: run.sample(),
    } satisfies SerialFrame)
  }
}

/** The schema's promise for line framing: "\\r before it is dropped" (devices send CR-LF). */
function withoutCr(line: Buffer): Buffer {
  return line.at(-1) === CR ? line.subarray(0, -1) : line
}
