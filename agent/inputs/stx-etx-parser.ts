import { Transform, type TransformCallback } from 'node:stream'
import { DEFAULT_MAX_FRAME_BYTES, SampledRun, type SerialFrame } from './serial-frame.js'

/** ASCII start and end of text: a record is the bytes between them (`framing: { type: stx-etx }`). */
export const STX = 0x02
export const ETX = 0x03

interface StxEtxParserOptions {
  /** A longer frame is malformed, and is counted rather than held in memory. */
  maxFrameBytes?: number
}

/**
 * STX/ETX framing: bytes in, SerialFrame objects out. Bytes
 * outside STX..ETX are noise, counted and sampled; a run of noise is reported when a frame starts,
 * when the stream ends, or every maxFrameBytes, so a garbled line (a wrong baud rate) cannot flood
 * the log. An STX before the ETX means the previous frame lost its end: it is reported as
 * unterminated and the new frame starts. A frame still open when the stream ends (a disconnect)
 * comes out as partial, never glued to the next port's bytes.
 */
export class StxEtxParser extends Transform {
  private readonly maxFrameBytes: number
  /** The current frame's bytes while inside STX..ETX and within the bound. */
  private frame: Buffer[] | undefined
  private frameLength = 0
  /** Set while skipping the rest of a frame that is already too long. */
  private oversize: SampledRun | undefined
  private noise: SampledRun | undefined

  constructor(options: StxEtxParserOptions = {}) {
    super({ readableObjectMode: true, readableHighWaterMark: 16 })
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES
  }

  private get inside(): boolean {
    return this.frame !== undefined || this.oversize !== undefined
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    let i = 0
    while (i < chunk.length) {
      if (!this.inside) {
        const stx = chunk.indexOf(STX, i)
        const end = stx === -1 ? chunk.length : stx
        if (end > i) this.addNoise(chunk.subarray(i, end))
        if (stx === -1) break
        this.flushNoise()
        this.startFrame()
        i = stx + 1
        continue
      }
      const next = nextControl(chunk, i)
      this.addBody(chunk.subarray(i, next === -1 ? chunk.length : next))
      if (next === -1) break
      if (chunk[next] === ETX) this.endFrame()
      else {
        this.abandonFrame('unterminated')
        this.startFrame()
      }
      i = next + 1
    }
    callback()
  }

  override _flush(callback: TransformCallback): void {
    if (this.inside) this.abandonFrame('partial')
    this.flushNoise()
    callback()
  }

  private startFrame(): void {
    this.frame = []
    this.frameLength = 0
  }

  private addBody(bytes: Buffer): void {
    if (bytes.length === 0) return
    if (this.oversize) {
      this.oversize.add(bytes)
      return
    }
    this.frame?.push(Buffer.from(bytes))
    this.frameLength += bytes.length
    if (this.frameLength > this.maxFrameBytes) {
      this.oversize = new SampledRun()
      for (const part of this.frame ?? []) this.oversize.add(part)
      this.frame = undefined
    }
  }

  private endFrame(): void {
    if (this.oversize) this.abandonFrame('oversize')
    else {
      const bytes = Buffer.concat(this.frame ?? [])
      this.frame = undefined
      // STX ETX with nothing between carries no record.
      if (bytes.length > 0) this.push({ type: 'frame', bytes } satisfies SerialFrame)
    }
  }

  /** Reports the open frame as malformed and forgets it. */
  private abandonFrame(cause: 'unterminated' | 'partial' | 'oversize'): void {
    // Too long is what is wrong with it, whatever ended it.
    const reason = this.oversize ? 'oversize' : cause
    let run = this.oversize
    if (!run) {
      run = new SampledRun()
      for (const part of this.frame ?? []) run.add(part)
    }
    this.frame = undefined
    this.oversize = undefined
    // STX alone, then nothing: a byte of noise rather than a frame worth reporting as one.
    if (run.length === 0) {
      this.addNoise(Buffer.from([STX]))
      return
    }
    this.push({ type: 'malformed', reason, length: run.length, sample: run.sample() } satisfies SerialFrame)
  }

  /** Reported in runs of at most maxFrameBytes, cut at the same places however the bytes came. */
  private addNoise(bytes: Buffer): void {
    let rest = bytes
    while (rest.length > 0) {
      this.noise ??= new SampledRun()
      const room = this.maxFrameBytes - this.noise.length
      this.noise.add(rest.subarray(0, room))
      rest = rest.subarray(room)
      if (this.noise.length >= this.maxFrameBytes) this.flushNoise()
    }
  }

  private flushNoise(): void {
    if (!this.noise) return
    this.push({ type: 'noise', length: this.noise.length, sample: this.noise.sample() } satisfies SerialFrame)
    this.noise = undefined
  }
}

/** The index of the next STX or ETX from `from`, or -1. */
function nextControl(chunk: Buffer, from: number): number {
  for (let i = from; i < chunk.length; i++) {
    const byte = chunk[i]
    if (byte === STX || byte === ETX) return i
  }
  return -1
}
