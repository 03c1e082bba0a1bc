import { ZkProtocolError } from './zk-protocol-error.js'

/**
 * The counts of CMD_GET_FREE_SIZES (ZK protocol: a u32le array; the device's record count is the
 * one the bulk read's record size is derived from).
 */
export interface ZkFreeSizes {
  users: number
  fingers: number
  /** Attendance records held: the dataset of a log read has this many. */
  records: number
  cards: number
  fingerCapacity: number
  userCapacity: number
  recordCapacity: number
  fingersAvailable: number
  usersAvailable: number
  recordsAvailable: number
  /** Face counts follow on devices that send 92 bytes or more. */
  faces?: number
  faceCapacity?: number
}

/** The fixed part every device sends: 20 u32 words. */
export const ZK_FREE_SIZES_MIN_BYTES = 80
const FACES_BYTES = 12

export function decodeZkFreeSizes(data: Buffer): ZkFreeSizes {
  if (data.length < ZK_FREE_SIZES_MIN_BYTES) {
    throw new ZkProtocolError(
      'zk_unexpected_reply',
      `CMD_GET_FREE_SIZES answered ${data.length} bytes, fewer than the ${ZK_FREE_SIZES_MIN_BYTES} it always has`,
    )
  }
  const word = (index: number) => data.readUInt32LE(index * 4)
  const sizes: ZkFreeSizes = {
    users: word(4),
    fingers: word(6),
    records: word(8),
    cards: word(12),
    fingerCapacity: word(14),
    userCapacity: word(15),
    recordCapacity: word(16),
    fingersAvailable: word(17),
    usersAvailable: word(18),
    recordsAvailable: word(19),
  }
  if (data.length >= ZK_FREE_SIZES_MIN_BYTES + FACES_BYTES) {
    sizes.faces = word(20)
    sizes.faceCapacity = word(22)
  }
  return sizes
}
