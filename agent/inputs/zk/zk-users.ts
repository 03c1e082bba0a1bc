import { ZkProtocolError } from './zk-protocol-error.js'
import { readPin } from './zk-records.js'

/**
 * ZK protocol: the user table is read as a bulk read of CMD_USERTEMP_RRQ with fct FCT_USER in the
 * CMD_DATA_WRRQ request (docs/development/zk-protocol.md, "User table").
 */
export const ZK_USERTEMP_RRQ = 9
export const ZK_FCT_USER = 5

/** ZK protocol user entry sizes: 72 bytes on TFT firmware, 28 on old black-and-white terminals. */
export type ZkUserEntryBytes = 72 | 28
const ENTRY_SIZES: readonly number[] = [72, 28]

/**
 * One user enrolled on the terminal. The entry's password and group are not kept: the agent needs
 * only what maps a record to a person, and keeps no secret it has no use for.
 */
export interface ZkUser {
  /** The device's internal index: what 8-byte attendance records carry instead of the PIN. */
  uid: number
  /** The PIN people know, as attendance records of 40 and 16 bytes carry it. */
  userId: string
  /** As typed at the terminal; empty when none was. */
  name: string
  /** 0 a user; other values are administrators of some kind. */
  privilege: number
  /** The card number, 0 when the user has no card. */
  card: number
}

/** An entry whose bytes are not a user (a PIN that is not text). */
export interface ZkMalformedUser {
  index: number
  bytes: string
  error: string
}

export interface ZkUserDataset {
  entryBytes: ZkUserEntryBytes | undefined
  users: ZkUser[]
  malformed: ZkMalformedUser[]
}

const DATASET_SIZE_BYTES = 4
const NAME_DECODER = new TextDecoder('utf-8')

/**
 * Reads a user table dataset: a u32le byte count, then the entries. As for attendance records, the
 * entry size is that count divided by the user count of CMD_GET_FREE_SIZES (ZK protocol: the
 * dataset does not say it). Sizes that do not add up are an error for the whole dataset; an entry
 * of the right size whose PIN cannot be read is reported as malformed, never dropped unseen.
 */
export function decodeZkUsers(dataset: Buffer, userCount: number): ZkUserDataset {
  if (!Number.isInteger(userCount) || userCount < 0) {
    throw new ZkProtocolError('zk_bad_dataset', `the user count must be a whole number, got ${userCount}`)
  }
  if (dataset.length < DATASET_SIZE_BYTES) {
    throw new ZkProtocolError(
      'zk_bad_dataset',
      `a user dataset starts with a u32 size, got ${dataset.length} byte(s)`,
    )
  }
  const total = dataset.readUInt32LE(0)
  const body = dataset.subarray(DATASET_SIZE_BYTES)
  if (body.length !== total) {
    throw new ZkProtocolError(
      'zk_bad_dataset',
      `the user dataset says ${total} bytes of entries but holds ${body.length}`,
    )
  }
  if (userCount === 0) {
    if (total !== 0) {
      throw new ZkProtocolError('zk_bad_dataset', `the device counts no user but sent ${total} bytes of them`)
    }
    return { entryBytes: undefined, users: [], malformed: [] }
  }
  const entryBytes = total / userCount
  if (!ENTRY_SIZES.includes(entryBytes)) {
    throw new ZkProtocolError(
      'zk_bad_dataset',
      `${total} bytes for ${userCount} user(s) is no user entry size the protocol has (72 or 28)`,
    )
  }
  const size = entryBytes as ZkUserEntryBytes
  const result: ZkUserDataset = { entryBytes: size, users: [], malformed: [] }
  for (let index = 0; index < userCount; index++) {
    const bytes = body.subarray(index * size, (index + 1) * size)
    try {
      result.users.push(decodeZkUserEntry(bytes, size))
    } catch (error) {
      if (!(error instanceof ZkProtocolError)) throw error
      result.malformed.push({ index, bytes: bytes.toString('hex'), error: error.message })
    }
  }
  return result
}

/** One user entry of a known size (ZK protocol user entry layouts, little-endian). */
export function decodeZkUserEntry(bytes: Buffer, size: ZkUserEntryBytes): ZkUser {
  if (bytes.length !== size) {
    throw new ZkProtocolError('zk_bad_dataset', `a ${size}-byte user entry has ${bytes.length} byte(s)`)
  }
  let user: ZkUser
  if (size === 72) {
    // u16 uid, u8 privilege @2, 8-byte password @3, 24-byte name @11, u32 card @35, 1 pad,
    // 7-byte group @40, 1 pad, 24-byte PIN @48.
    user = {
      uid: bytes.readUInt16LE(0),
      userId: readPin(bytes.subarray(48, 72)),
      name: readName(bytes.subarray(11, 35)),
      privilege: bytes.readUInt8(2),
      card: bytes.readUInt32LE(35),
    }
  } else {
    // u16 uid, u8 privilege @2, 5-byte password @3, 8-byte name @8, u32 card @16, 1 pad, u8 group
    // @21, i16 time zone @22, u32 PIN @24 (numeric PINs only on these terminals).
    user = {
      uid: bytes.readUInt16LE(0),
      userId: String(bytes.readUInt32LE(24)),
      name: readName(bytes.subarray(8, 16)),
      privilege: bytes.readUInt8(2),
      card: bytes.readUInt32LE(16),
    }
  }
  // A user with no PIN could not be told apart from any other: no record may be mapped to it.
  if (user.userId === '')
    throw new ZkProtocolError('zk_bad_dataset', `the user of uid ${user.uid} has no PIN`)
  return user
}

/**
 * A NUL-padded name. Terminals store what was typed at the keypad or sent by software, in no
 * encoding the protocol names: read as UTF-8 (ASCII included), an unreadable byte shown as U+FFFD,
 * since a name is only shown, never matched.
 */
function readName(field: Buffer): string {
  const end = field.indexOf(0)
  return NAME_DECODER.decode(field.subarray(0, end === -1 ? field.length : end)).trim()
}
