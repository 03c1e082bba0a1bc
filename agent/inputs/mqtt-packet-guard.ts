import type { Duplex } from 'node:stream'

/**
 * Largest MQTT packet a device may send the embedded broker. A punch is a few hundred bytes and an
 * ATTLOG batch a few kilobytes; aedes itself has no limit (a client could make the agent buffer a
 * packet of 256 MB, the protocol's maximum), and every input needs one.
 */
export const MAX_MQTT_PACKET_BYTES = 256 * 1024

/**
 * Watches the bytes a client sends, packet by packet, and calls `onOversize` (which should destroy
 * the connection) as soon as a packet header announces more than `maxBytes`, before the body is
 * buffered. It only reads the fixed headers (MQTT 3.1.1 §2.2: a type byte, then the remaining
 * length in one to four bytes of 7 bits, least significant first) and skips the bodies.
 *
 * It sees the bytes as aedes reads them (aedes pulls with `read()` on 'readable'); a 'data'
 * listener would switch the stream to flowing mode under aedes and break its backpressure.
 */
export function guardPacketSize(
  stream: Duplex,
  maxBytes: number,
  onOversize: (announced: number) => void,
): void {
  let phase: 'type' | 'length' | 'body' = 'type'
  let length = 0
  let multiplier = 1
  let remaining = 0
  const read = stream.read.bind(stream)
  stream.read = (size?: number) => {
    const chunk: Buffer | null = read(size)
    if (chunk) inspect(chunk)
    return chunk
  }
  function inspect(chunk: Buffer): void {
    let i = 0
    while (i < chunk.length) {
      if (phase === 'type') {
        i++
        phase = 'length'
        length = 0
        multiplier = 1
      } else if (phase === 'length') {
        const byte = chunk[i++] as number
        length += (byte & 0x7f) * multiplier
        multiplier *= 128
        if (length > maxBytes) {
          onOversize(length)
          return
        }
        if ((byte & 0x80) === 0) {
          remaining = length
          phase = remaining > 0 ? 'body' : 'type'
        } else if (multiplier > 128 ** 4) {
          onOversize(Number.POSITIVE_INFINITY) // a malformed length: more than four bytes
          return
        }
      } else {
        const skip = Math.min(remaining, chunk.length - i)
        i += skip
        remaining -= skip
        if (remaining === 0) phase = 'type'
      }
    }
  }
}
