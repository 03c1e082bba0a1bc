/** A user enrolled on the terminal. */
export interface ZkUser {
  /** The internal index (u16): what 8-byte records hold instead of the user id. */
  uid: number
  /** The PIN people know (up to 24 ASCII characters; digits only on 16- and 8-byte devices). */
  userId: string
  name: string
  /** 0 user, 14 admin (pyzk `USER_ADMIN`). */
  privilege: number
  password: string
  card: number
}

/** User table entry sizes: 72 bytes on TFT firmware, 28 on old black-and-white (pyzk get_users). */
export type ZkUserEntrySize = 28 | 72

function writeText(target: Buffer, text: string, offset: number, width: number): void {
  Buffer.from(text, 'ascii').subarray(0, width).copy(target, offset)
}

/** The users a terminal holds, by user id and by uid. */
export class ZkUserTable {
  private readonly byUserId = new Map<string, ZkUser>()
  private readonly byUid = new Map<number, ZkUser>()
  private nextUid = 1

  get count(): number {
    return this.byUserId.size
  }

  list(): ZkUser[] {
    return [...this.byUserId.values()]
  }

  get(userId: string): ZkUser | undefined {
    return this.byUserId.get(userId)
  }

  getByUid(uid: number): ZkUser | undefined {
    return this.byUid.get(uid)
  }

  /** Enrols (or replaces) a user; without a uid, the next free one. */
  add(user: Partial<ZkUser> & { userId: string }): ZkUser {
    if (!/^[\x21-\x7e]{1,24}$/.test(user.userId)) throw new TypeError(`"${user.userId}" is no user id`)
    const existing = this.byUserId.get(user.userId)
    if (existing) this.byUid.delete(existing.uid)
    let uid = user.uid ?? existing?.uid
    if (uid === undefined) {
      while (this.byUid.has(this.nextUid)) this.nextUid++
      uid = this.nextUid
    }
    if (!Number.isInteger(uid) || uid < 1 || uid > 0xffff) throw new RangeError(`uid ${uid} is not 1-65535`)
    const other = this.byUid.get(uid)
    if (other && other.userId !== user.userId) throw new RangeError(`uid ${uid} is ${other.userId}'s`)
    const entry: ZkUser = {
      uid,
      userId: user.userId,
      name: user.name ?? '',
      privilege: user.privilege ?? 0,
      password: user.password ?? '',
      card: user.card ?? 0,
    }
    this.byUserId.set(entry.userId, entry)
    this.byUid.set(uid, entry)
    return entry
  }

  /** The user with this id, enrolled first when the terminal has none. */
  ensure(userId: string): ZkUser {
    return this.byUserId.get(userId) ?? this.add({ userId })
  }

  clear(): void {
    this.byUserId.clear()
    this.byUid.clear()
    this.nextUid = 1
  }

  /**
   * The table as CMD_DATA_WRRQ (CMD_USERTEMP_RRQ, FCT_USER) returns it, without the size prefix:
   * 72 bytes `<H B 8s 24s I x 7s x 24s>` (uid, privilege, password, name, card, group, user id) or
   * 28 bytes `<H B 5s 8s I x B h I>` (uid, privilege, password, name, card, group, zone, user id).
   */
  encode(entrySize: ZkUserEntrySize): Buffer {
    const users = this.list()
    const out = Buffer.alloc(users.length * entrySize)
    users.forEach((u, i) => {
      const at = i * entrySize
      out.writeUInt16LE(u.uid, at)
      out.writeUInt8(u.privilege & 0xff, at + 2)
      if (entrySize === 72) {
        writeText(out, u.password, at + 3, 8)
        writeText(out, u.name, at + 11, 24)
        out.writeUInt32LE(u.card >>> 0, at + 35)
        writeText(out, '1', at + 40, 7)
        writeText(out, u.userId, at + 48, 24)
      } else {
        writeText(out, u.password, at + 3, 5)
        writeText(out, u.name, at + 8, 8)
        out.writeUInt32LE(u.card >>> 0, at + 16)
        out.writeUInt8(1, at + 21)
        out.writeUInt32LE(Number(u.userId) >>> 0, at + 24)
      }
    })
    return out
  }
}
