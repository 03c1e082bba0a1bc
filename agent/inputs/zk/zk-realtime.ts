import { ZkProtocolError } from './zk-protocol-error.js'
import { readPin } from './zk-records.js'
import { decodeZkRealtimeTime, ZK_REALTIME_TIME_BYTES, type ZkWallTime } from './zk-time.js'

/** A punch reported as it happens (ZK protocol: EF_ATTLOG event after CMD_REG_EVENT). */
export interface ZkAttlogEvent {
  userId: string
  verify: number
  state: number
  time: ZkWallTime
}

/**
 * The EF_ATTLOG layouts by payload size (ZK protocol real-time events): a u16 or u32 PIN, or a 24-byte ASCII
 * PIN, then verify u8, state u8, the 6-byte time, and bytes the protocol leaves unnamed.
 */
const LAYOUTS: ReadonlyMap<number, { pin: 'u16' | 'u32' | 'text' }> = new Map([
  [10, { pin: 'u16' }],
  [12, { pin: 'u32' }],
  [14, { pin: 'u16' }],
  [32, { pin: 'text' }],
  [36, { pin: 'text' }],
  [37, { pin: 'text' }],
  [52, { pin: 'text' }],
])

/** The payload sizes an EF_ATTLOG event can have. */
export const ZK_ATTLOG_EVENT_SIZES: readonly number[] = [...LAYOUTS.keys()]

const TEXT_PIN_BYTES = 24

export function decodeZkAttlogEvent(data: Buffer): ZkAttlogEvent {
  const layout = LAYOUTS.get(data.length)
  if (!layout) {
    throw new ZkProtocolError(
      'zk_bad_event',
      `an EF_ATTLOG event has ${ZK_ATTLOG_EVENT_SIZES.join(', ')} bytes, this one ${data.length}`,
    )
  }
  let userId: string
  let offset: number
  if (layout.pin === 'u16') {
    userId = String(data.readUInt16LE(0))
    offset = 2
  } else if (layout.pin === 'u32') {
    userId = String(data.readUInt32LE(0))
    offset = 4
  } else {
    userId = readPin(data.subarray(0, TEXT_PIN_BYTES), 'zk_bad_event')
    offset = TEXT_PIN_BYTES
  }
  if (userId === '') throw new ZkProtocolError('zk_bad_event', 'the EF_ATTLOG event has an empty PIN')
  const timeBytes = data.subarray(offset + 2, offset + 2 + ZK_REALTIME_TIME_BYTES)
  let time: ZkWallTime
  try {
    time = decodeZkRealtimeTime(timeBytes)
  } catch (error) {
    throw new ZkProtocolError('zk_bad_event', `the EF_ATTLOG event's time: ${(error as Error).message}`, {
      cause: error,
    })
  }
  return { userId, verify: data.readUInt8(offset), state: data.readUInt8(offset + 1), time }
}
