/**
 * What a framer makes of a serial device's byte stream: the frames to
 * hand to the intake, and what could not be a frame, counted and logged but never read as punches.
 */
export type SerialFrame =
  | { type: 'frame'; bytes: Buffer }
  | {
      type: 'malformed'
      /**
       * oversize: longer than the bound (kept out of memory); unterminated: STX came again before
       * ETX; partial: cut off by the end of the stream (a disconnect), never glued to what follows.
       */
      reason: 'oversize' | 'unterminated' | 'partial'
      /** How many bytes the frame had (an oversize one is counted, not kept). */
      length: number
      /** Its first bytes, for the log. */
      sample: Buffer
    }
  /** Bytes outside STX..ETX: line noise, a wrong baud rate, or a device's checksum byte. */
  | { type: 'noise'; length: number; sample: Buffer }

/** Longest frame kept: ATTLOG and JSON records are well under 1 KiB. */
export const DEFAULT_MAX_FRAME_BYTES = 4096

/** How many bytes of a bad frame or of noise are kept for the log, in hex. */
const SAMPLE_BYTES = 64

/** A run of bytes that is counted in full but only sampled, so memory stays bounded. */
export class SampledRun {
  length = 0
  private readonly parts: Buffer[] = []
  private kept = 0

  add(bytes: Buffer): void {
    this.length += bytes.length
    if (this.kept < SAMPLE_BYTES && bytes.length > 0) {
      // Copied: the port's read pool outlives this run.
      const part = Buffer.from(bytes.subarray(0, SAMPLE_BYTES - this.kept))
      this.parts.push(part)
      this.kept += part.length
    }
  }

  sample(): Buffer {
    return Buffer.concat(this.parts)
  }
}
