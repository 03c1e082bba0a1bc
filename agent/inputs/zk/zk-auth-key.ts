/**
 * ZK protocol CMD_AUTH key (the firmware's MakeKey): the comm key's 32 bits reversed, plus the
 * session id, XORed byte-wise with "ZKSO", its 16-bit halves swapped, then XORed with `ticks` except
 * for byte 2, which carries `ticks` itself. Clients send ticks = 50.
 */
export const ZK_AUTH_TICKS = 50

export function makeZkAuthKey(commKey: number, sessionId: number, ticks = ZK_AUTH_TICKS): Buffer {
  if (!Number.isInteger(commKey) || commKey < 0 || commKey > 0xffffffff) {
    throw new RangeError(`the comm key must be an integer from 0 to ${0xffffffff}, got ${commKey}`)
  }
  let reversed = 0
  for (let bit = 0; bit < 32; bit++) {
    reversed = ((reversed << 1) | ((commKey >>> bit) & 1)) >>> 0
  }
  const sum = (reversed + (sessionId & 0xffff)) >>> 0
  const scrambled = Buffer.alloc(4)
  scrambled.writeUInt32LE(sum)
  const zkso = Buffer.from('ZKSO', 'latin1')
  for (let i = 0; i < 4; i++) scrambled[i] = (scrambled[i] ?? 0) ^ (zkso[i] ?? 0)
  const swapped = Buffer.alloc(4)
  swapped.writeUInt16LE(scrambled.readUInt16LE(2), 0)
  swapped.writeUInt16LE(scrambled.readUInt16LE(0), 2)
  const b = ticks & 0xff
  return Buffer.from([(swapped[0] ?? 0) ^ b, (swapped[1] ?? 0) ^ b, b, (swapped[3] ?? 0) ^ b])
}
