/** A punch as a device record describes it, before the agent makes sense of it. */
export interface DevicePunch {
  employeeCode: string
  /** IN or OUT, when the record says so directly. */
  punchType?: 'IN' | 'OUT'
  /** The device's status code (ZKTeco: 0 check-in, 1 check-out, ...), mapped by the device's statusMap. */
  status?: string
  /** As written: RFC 3339 with an offset, a local `YYYY-MM-DD HH:mm:ss`, or absent (time of receipt). */
  punchedAt?: string
}

/** What a record format makes of one frame: the punches it could read, and the records it could not. */
export interface FrameParse {
  punches: DevicePunch[]
  malformed: { record: string; error: string }[]
}
