/**
 * User table datasets (docs/development/zk-protocol.md, "User table"): the entry size is total /
 * user count (72 or 28), each layout decodes from bytes built by hand from the protocol's field
 * list, sizes that do not add up are an error for the whole dataset, and an entry that cannot be
 * read is reported, never dropped unseen.
 */
import { describe, expect, it } from 'vitest'
import { ZkProtocolError } from '../../../../agent/inputs/zk/zk-protocol-error.js'
import { decodeZkUserEntry, decodeZkUsers } from '../../../../agent/inputs/zk/zk-users.js'

/** A 72-byte entry `<H B 8s 24s I x 7s x 24s>`: uid, privilege, password, name, card, group, PIN. */
function entry72(user: {
  uid: number
  privilege: number
  password: string
  name: string
  card: number
  group: string
  pin: string
}): Buffer {
  const e = Buffer.alloc(72)
  e.writeUInt16LE(user.uid, 0)
  e.writeUInt8(user.privilege, 2)
  e.write(user.password, 3, 8, 'latin1')
  e.write(user.name, 11, 24, 'utf8')
  e.writeUInt32LE(user.card, 35)
  e.write(user.group, 40, 7, 'latin1')
  e.write(user.pin, 48, 24, 'latin1')
  return e
}

/** A 28-byte entry `<H B 5s 8s I x B h I>`: uid, privilege, password, name, card, group, zone, PIN. */
function entry28(user: {
  uid: number
  privilege: number
  password: string
  name: string
  card: number
  pin: number
}): Buffer {
  const e = Buffer.alloc(28)
  e.writeUInt16LE(user.uid, 0)
  e.writeUInt8(user.privilege, 2)
  e.write(user.password, 3, 5, 'latin1')
  e.write(user.name, 8, 8, 'latin1')
  e.writeUInt32LE(user.card, 16)
  e.writeUInt8(1, 21)
  e.writeInt16LE(-1, 22)
  e.writeUInt32LE(user.pin, 24)
  return e
}

function dataset(...entries: Buffer[]): Buffer {
  const body = Buffer.concat(entries)
  const size = Buffer.alloc(4)
  size.writeUInt32LE(body.length)
  return Buffer.concat([size, body])
}

function badDataset(run: () => unknown): ZkProtocolError {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(ZkProtocolError)
    expect((error as ZkProtocolError).code).toBe('zk_bad_dataset')
    return error as ZkProtocolError
  }
  throw new Error('expected zk_bad_dataset')
}

describe('decodeZkUsers', () => {
  it('reads 72-byte entries (TFT firmware): PIN as text, name up to 24 bytes, no password kept', () => {
    const read = decodeZkUsers(
      dataset(
        entry72({
          uid: 1,
          privilege: 14,
          password: '1234',
          name: 'Asha Rao',
          card: 4_000_123_456,
          group: '1',
          pin: 'E0042',
        }),
        entry72({
          uid: 513,
          privilege: 0,
          password: '',
          name: 'Ravi Kumar Venkataraman',
          card: 0,
          group: '12',
          pin: '123456789012345678901234',
        }),
        entry72({ uid: 2, privilege: 0, password: '', name: 'Zoë', card: 7, group: '', pin: '7' }),
      ),
      3,
    )
    expect(read).toEqual({
      entryBytes: 72,
      malformed: [],
      users: [
        { uid: 1, userId: 'E0042', name: 'Asha Rao', privilege: 14, card: 4_000_123_456 },
        {
          uid: 513,
          userId: '123456789012345678901234',
          name: 'Ravi Kumar Venkataraman',
          privilege: 0,
          card: 0,
        },
        { uid: 2, userId: '7', name: 'Zoë', privilege: 0, card: 7 },
      ],
    })
    expect(read.users[0]).not.toHaveProperty('password')
  })

  it('reads 28-byte entries (black-and-white firmware): a u32 PIN and an 8-byte name', () => {
    const read = decodeZkUsers(
      dataset(
        entry28({ uid: 1, privilege: 0, password: '99', name: 'ASHA', card: 0, pin: 4822257 }),
        entry28({ uid: 65535, privilege: 14, password: '', name: 'SUPERVSR', card: 123, pin: 4_294_967_295 }),
      ),
      2,
    )
    expect(read).toEqual({
      entryBytes: 28,
      malformed: [],
      users: [
        { uid: 1, userId: '4822257', name: 'ASHA', privilege: 0, card: 0 },
        { uid: 65535, userId: '4294967295', name: 'SUPERVSR', privilege: 14, card: 123 },
      ],
    })
  })

  it('reports an entry whose PIN is not text, and reads the others', () => {
    const bad = entry72({ uid: 3, privilege: 0, password: '', name: 'X', card: 0, group: '', pin: '' })
    bad.write('\x01\x02', 48, 'latin1')
    const empty = entry72({ uid: 4, privilege: 0, password: '', name: 'Y', card: 0, group: '', pin: '' })
    const read = decodeZkUsers(
      dataset(
        entry72({ uid: 1, privilege: 0, password: '', name: 'A', card: 0, group: '', pin: '11' }),
        bad,
        empty,
      ),
      3,
    )
    expect(read.users.map((u) => u.userId)).toEqual(['11'])
    expect(read.malformed).toEqual([
      { index: 1, bytes: bad.toString('hex'), error: expect.stringMatching(/not printable ASCII/) },
      { index: 2, bytes: empty.toString('hex'), error: expect.stringMatching(/uid 4 has no PIN/) },
    ])
  })

  it('shows an unreadable byte of a name, which is only shown, rather than refuse the user', () => {
    const e = entry72({ uid: 9, privilege: 0, password: '', name: '', card: 0, group: '', pin: '9' })
    e.writeUInt8(0xff, 11)
    expect(decodeZkUserEntry(e, 72)).toMatchObject({ userId: '9', name: '\ufffd' })
  })

  it('has no entries when the device counts no user', () => {
    expect(decodeZkUsers(dataset(), 0)).toEqual({ entryBytes: undefined, users: [], malformed: [] })
  })

  it('refuses the whole dataset when its sizes do not add up', () => {
    const two = dataset(
      entry72({ uid: 1, privilege: 0, password: '', name: '', card: 0, group: '', pin: '1' }),
      entry72({ uid: 2, privilege: 0, password: '', name: '', card: 0, group: '', pin: '2' }),
    )
    expect(badDataset(() => decodeZkUsers(two, 3)).message).toMatch(
      /144 bytes for 3 user\(s\) is no user entry size/,
    )
    expect(badDataset(() => decodeZkUsers(two, 0)).message).toMatch(/counts no user but sent 144 bytes/)
    expect(badDataset(() => decodeZkUsers(two.subarray(0, 100), 2)).message).toMatch(
      /says 144 bytes of entries but holds 96/,
    )
    expect(badDataset(() => decodeZkUsers(Buffer.from([1, 0]), 1)).message).toMatch(/starts with a u32 size/)
    expect(badDataset(() => decodeZkUsers(two, -1)).message).toMatch(/whole number/)
    // 40 bytes a user is an attendance record's size, not a user entry's.
    expect(badDataset(() => decodeZkUsers(dataset(Buffer.alloc(80)), 2)).message).toMatch(/\(72 or 28\)/)
    expect(badDataset(() => decodeZkUserEntry(Buffer.alloc(27), 28)).message).toMatch(
      /28-byte user entry has 27/,
    )
  })
})
