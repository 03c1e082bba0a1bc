/**
 * 52 bits of a punch id (hex after `hjp_`) as a number: a Set of numbers needs no string hashing,
 * which on a busy terminal's uploads cost a tenth of the agent's time. Two ids sharing 52 bits would
 * only miscount a resend: nothing is decided on it.
 */
function key(id: string): number {
  const n = Number.parseInt(id.slice(4, 17), 16)
  return Number.isNaN(n) ? -1 : n
}

/**
 * The ids of punches stored lately, to count what devices send again (a terminal that did not hear
 * its acknowledgement, an MQTT QoS 1 redelivery, an ADMS upload repeated after a reboot or a reset
 * cursor): a device that resends much is a device whose acknowledgements go astray, which IT staff
 * should see. The copies are stored all the same; the punch id (the cloud's externalId) makes them
 * harmless. Bounded: the oldest ids are forgotten first.
 */
export class RecentPunchIds {
  private readonly ids = new Set<number>()
  /**
   * The same ids in a ring, the oldest at `next` once it is full. Not the Set's own order: V8 keeps
   * a deleted entry as a hole until the table is rebuilt, and `values().next()` walks every hole
   * from the start, which made each add past capacity cost a scan (12 µs a punch at 20,000).
   */
  private readonly ring: Float64Array
  private filled = 0
  private next = 0

  constructor(private readonly capacity: number) {
    this.ring = new Float64Array(capacity)
  }

  has(id: string): boolean {
    return this.ids.has(key(id))
  }

  add(id: string): void {
    const k = key(id)
    if (this.ids.has(k)) return
    if (this.filled === this.capacity) this.ids.delete(this.ring[this.next] as number)
    else this.filled++
    this.ring[this.next] = k
    this.ids.add(k)
    this.next = (this.next + 1) % this.capacity
  }

  get size(): number {
    return this.ids.size
  }
}
