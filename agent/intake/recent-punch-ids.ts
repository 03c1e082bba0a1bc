/**
 * The ids of punches stored lately, to count what devices send again (a terminal that did not hear
 * its acknowledgement, an MQTT QoS 1 redelivery, an ADMS upload repeated after a reboot or a reset
 * cursor): a device that resends much is a device whose acknowledgements go astray, which IT staff
 * should see. The copies are stored all the same; the punch id (the cloud's externalId) makes them
 * harmless. Bounded: the oldest ids are forgotten first.
 */
export class RecentPunchIds {
  private readonly ids = new Set<string>()

  constructor(private readonly capacity: number) {}

  has(id: string): boolean {
    return this.ids.has(id)
  }

  add(id: string): void {
    if (this.ids.has(id)) return
    this.ids.add(id)
    // A Set iterates in insertion order: the first value is the oldest.
    if (this.ids.size > this.capacity) this.ids.delete(this.ids.values().next().value as string)
  }

  get size(): number {
    return this.ids.size
  }
}
