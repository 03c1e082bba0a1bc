/** Where a chunk sits in the index, and what it holds. */
export interface IndexedChunk {
  seq: number
  count: number
  bytes: number
  writtenAt: number
}

const INITIAL_CAPACITY = 1024
const MAX_BYTES = 2 ** 32 - 1
/** Removed slots are compacted away only once there are this many, so small spools never copy. */
const COMPACT_FLOOR = 1024

/**
 * The chunks of a ChunkLog in sequence order, oldest first, with running totals, so that every
 * question asked per punch (how full, how old, what comes next) costs O(1) or O(log n) however
 * many chunk files a long outage leaves (a million one-punch chunks is a month of a factory's
 * punches arriving one at a time).
 *
 * The columns are typed arrays rather than an object per chunk: 24 bytes a chunk outside the
 * JavaScript heap, so a big index neither slows the garbage collector nor counts against the
 * heap limit the service unit sets (deploy/hajri-agent.service). A removed chunk leaves a hole
 * (count 0) that `head` skips; holes are compacted away once they outnumber live chunks, which
 * keeps removal amortised O(1) whatever the order chunks are removed in.
 */
export class ChunkIndex {
  private seqs: Float64Array = new Float64Array(INITIAL_CAPACITY)
  /** 0 marks a removed slot: a chunk file always holds at least one item. */
  private counts: Uint32Array = new Uint32Array(INITIAL_CAPACITY)
  /** Bytes, up to 4 GiB: a chunk holds at most 10,000 punches, a few MB. */
  private sizes: Uint32Array = new Uint32Array(INITIAL_CAPACITY)
  private times: Float64Array = new Float64Array(INITIAL_CAPACITY)
  /** Slots before this are all removed. */
  private head = 0
  /** One past the last slot in use. */
  private tail = 0
  private sorted = true
  /** Live chunks. */
  size = 0
  items = 0
  bytes = 0

  /** The highest sequence number indexed (removed ones included), or 0. */
  get lastSeq(): number {
    return this.tail > 0 ? (this.seqs[this.tail - 1] as number) : 0
  }

  /**
   * Adds a chunk. In sequence order (appends) it stays sorted; out of order (a directory listing
   * at open) it must be followed by sort() before anything is looked up.
   */
  add(chunk: IndexedChunk): void {
    if (chunk.count <= 0) throw new RangeError('a chunk holds at least one item')
    if (this.tail === this.seqs.length) this.makeRoom()
    const at = this.tail++
    if (at > this.head && (this.seqs[at - 1] as number) >= chunk.seq) this.sorted = false
    this.seqs[at] = chunk.seq
    this.counts[at] = chunk.count
    // A bigger file (not one the agent wrote) is counted as 4 GiB, and read whole all the same.
    const bytes = Math.min(chunk.bytes, MAX_BYTES)
    this.sizes[at] = bytes
    this.times[at] = chunk.writtenAt
    this.size++
    this.items += chunk.count
    this.bytes += bytes
  }

  /**
   * Makes room for `capacity` chunks in all, so that filling the index at open allocates once:
   * growing by doubling there would leave garbage as big as the index itself, all of it in the
   * agent's peak RSS until the garbage collector frees it.
   */
  reserve(capacity: number): void {
    if (capacity > this.seqs.length) this.resize(capacity)
  }

  /**
   * Puts chunks added out of order into sequence order (once, at open: O(n log n)). A heapsort in
   * place on the four columns: sorting a big index at open takes no memory beside it, where a
   * sorted copy would add to the agent's peak RSS as much as the index itself.
   */
  sort(): void {
    if (this.sorted) return
    const { seqs, counts, sizes, times } = this
    const base = this.head
    const n = this.tail - this.head
    const columns = [seqs, counts, sizes, times]
    const swap = (a: number, b: number) => {
      const i = base + a
      const j = base + b
      for (const column of columns) {
        const value = column[i] as number
        column[i] = column[j] as number
        column[j] = value
      }
    }
    // Moves the slot at `parent` down the max-heap held in the first `end` slots.
    const siftDown = (root: number, end: number) => {
      for (let parent = root; ; ) {
        let child = 2 * parent + 1
        if (child >= end) return
        if (child + 1 < end && (seqs[base + child + 1] as number) > (seqs[base + child] as number)) child++
        if ((seqs[base + parent] as number) >= (seqs[base + child] as number)) return
        swap(parent, child)
        parent = child
      }
    }
    for (let i = (n >>> 1) - 1; i >= 0; i--) siftDown(i, n)
    for (let end = n - 1; end > 0; end--) {
      swap(0, end)
      siftDown(0, end)
    }
    this.sorted = true
    this.skipRemoved()
  }

  /** The oldest live chunk. */
  first(): IndexedChunk | undefined {
    return this.head < this.tail ? this.at(this.head) : undefined
  }

  /** The first live chunk with a sequence number above `seq` (0: the oldest). */
  after(seq: number): IndexedChunk | undefined {
    const slot = this.nextLive(this.lowerBound(seq + 1))
    return slot < this.tail ? this.at(slot) : undefined
  }

  /** Live chunks after `seq`, oldest first; safe to use while chunks are added and removed. */
  *from(seq: number): Generator<IndexedChunk> {
    for (let chunk = this.after(seq); chunk; chunk = this.after(chunk.seq)) yield chunk
  }

  /**
   * Consecutive live chunks after `seq`, as many as fit in `maxItems` together, and always at
   * least one (a chunk bigger than `maxItems` comes alone).
   */
  run(seq: number, maxItems: number): IndexedChunk[] {
    const taken: IndexedChunk[] = []
    let items = 0
    for (
      let slot = this.nextLive(this.lowerBound(seq + 1));
      slot < this.tail;
      slot = this.nextLive(slot + 1)
    ) {
      const count = this.counts[slot] as number
      if (taken.length > 0 && items + count > maxItems) break
      taken.push(this.at(slot))
      items += count
      if (items >= maxItems) break
    }
    return taken
  }

  /** Whether this chunk (sequence number and item count, as its file name says) is indexed. */
  has(seq: number, count: number): boolean {
    return this.find(seq, count) >= 0
  }

  /** Forgets a chunk; false if it was not indexed. */
  remove(seq: number, count: number): boolean {
    const slot = this.find(seq, count)
    if (slot < 0) return false
    this.counts[slot] = 0
    this.size--
    this.items -= count
    this.bytes -= this.sizes[slot] as number
    this.skipRemoved()
    const holes = this.tail - this.head - this.size
    if (holes > COMPACT_FLOOR && holes > this.size) this.compact()
    return true
  }

  private at(slot: number): IndexedChunk {
    return {
      seq: this.seqs[slot] as number,
      count: this.counts[slot] as number,
      bytes: this.sizes[slot] as number,
      writtenAt: this.times[slot] as number,
    }
  }

  /** The first slot at or after `from` whose sequence number is at least `seq`. */
  private lowerBound(seq: number, from = this.head): number {
    let low = from
    let high = this.tail
    while (low < high) {
      const mid = (low + high) >>> 1
      if ((this.seqs[mid] as number) < seq) low = mid + 1
      else high = mid
    }
    return low
  }

  private find(seq: number, count: number): number {
    if (count <= 0) return -1
    // Two files with one sequence number (never written by the agent, but a directory can hold
    // anything) are told apart by their item count, which is part of their name.
    for (let slot = this.lowerBound(seq); slot < this.tail && this.seqs[slot] === seq; slot++)
      if (this.counts[slot] === count) return slot
    return -1
  }

  private nextLive(slot: number): number {
    let at = slot
    while (at < this.tail && this.counts[at] === 0) at++
    return at
  }

  private skipRemoved(): void {
    this.head = this.nextLive(this.head)
    if (this.head === this.tail) {
      // Empty: start again at the front instead of creeping along the arrays.
      this.head = 0
      this.tail = 0
    }
  }

  /** Moves the live slots to the front, in order. */
  private compact(): void {
    let to = 0
    for (let from = this.head; from < this.tail; from++) {
      if (this.counts[from] === 0) continue
      this.seqs[to] = this.seqs[from] as number
      this.counts[to] = this.counts[from] as number
      this.sizes[to] = this.sizes[from] as number
      this.times[to] = this.times[from] as number
      to++
    }
    this.head = 0
    this.tail = to
  }

  private makeRoom(): void {
    if (this.tail - this.head - this.size > 0 || this.head > 0) {
      this.compact()
      // Still more than half full: grow as well, so that filling up stays amortised O(1).
      if (this.tail * 2 <= this.seqs.length) return
    }
    this.resize(this.seqs.length * 2)
  }

  /** New columns of `capacity` slots, holding the slots in use from the front. */
  private resize(capacity: number): void {
    const move = <A extends Float64Array | Uint32Array>(column: A): A => {
      const moved = new (column.constructor as new (length: number) => A)(capacity)
      moved.set(column.subarray(this.head, this.tail))
      return moved
    }
    this.seqs = move(this.seqs)
    this.counts = move(this.counts)
    this.sizes = move(this.sizes)
    this.times = move(this.times)
    this.tail -= this.head
    this.head = 0
  }
}
