/** What CMD_GET_FREE_SIZES reports. */
export interface ZkFreeSizes {
  users: number
  fingers: number
  records: number
  operationRecords: number
  admins: number
  passwords: number
  fingerCapacity: number
  userCapacity: number
  recordCapacity: number
  faces: number
  faceCapacity: number
}

/**
 * The CMD_GET_FREE_SIZES reply: 23 u32 LE (92 bytes; zk-protocol `terminal.md`, "Get Device
 * Status"; pyzk read_sizes): users [4], fingers [6], records [8], operation records [10], admins
 * [12], passwords [13], finger, user and record capacities [14-16], what is left of each [17-19],
 * faces [20], face capacity [22].
 */
export function encodeFreeSizes(s: ZkFreeSizes): Buffer {
  const words = new Array<number>(23).fill(0)
  words[4] = s.users
  words[6] = s.fingers
  words[8] = s.records
  words[10] = s.operationRecords
  words[12] = s.admins
  words[13] = s.passwords
  words[14] = s.fingerCapacity
  words[15] = s.userCapacity
  words[16] = s.recordCapacity
  words[17] = Math.max(0, s.fingerCapacity - s.fingers)
  words[18] = Math.max(0, s.userCapacity - s.users)
  words[19] = Math.max(0, s.recordCapacity - s.records)
  words[20] = s.faces
  words[22] = s.faceCapacity
  const out = Buffer.alloc(92)
  words.forEach((w, i) => {
    out.writeUInt32LE(w >>> 0, i * 4)
  })
  return out
}
