/**
 * What a terminal says about itself, for status and metrics: its model and firmware, and how full
 * it is. A full terminal stops recording (or overwrites its oldest records), so the counts against
 * the capacities are what IT staff need to see coming.
 */
export interface TerminalInfo {
  model?: string
  firmware?: string
  platform?: string
  ipAddress?: string
  users?: number
  fingerprints?: number
  faces?: number
  attendanceRecords?: number
  userCapacity?: number
  fingerprintCapacity?: number
  faceCapacity?: number
  attendanceCapacity?: number
}

const count = (text: string | undefined): number | undefined =>
  text !== undefined && /^\d{1,10}$/.test(text.trim()) ? Number(text.trim()) : undefined

const label = (text: string | undefined): string | undefined => {
  const clean = text?.replace(/[^\x20-\x7e]/g, '').trim()
  return clean ? clean.slice(0, 64) : undefined
}

/** Drops the fields that were not there, so a merge keeps what was known. */
function defined(info: TerminalInfo): TerminalInfo {
  return Object.fromEntries(Object.entries(info).filter(([, v]) => v !== undefined)) as TerminalInfo
}

/**
 * The `INFO` query parameter of a command poll (`GET /iclock/getrequest?SN=..&INFO=..`), in the
 * protocol's order: firmware version, users, fingerprints, attendance records, IP address,
 * fingerprint algorithm, face algorithm, faces needed per user, faces, function bits.
 */
export function parseInfoParameter(text: string): TerminalInfo {
  const [firmware, users, fingerprints, records, ip, , , , faces] = text.split(',')
  return defined({
    firmware: label(firmware),
    users: count(users),
    fingerprints: count(fingerprints),
    attendanceRecords: count(records),
    ipAddress: label(ip),
    faces: count(faces),
  })
}

/**
 * The details of an `INFO` command result, or of a `table=options` upload: `~DeviceName`,
 * `FWVersion`, `UserCount`/`~MaxUserCount`, `TransactionCount` or `AttLogCount`/`~MaxAttLogCount`,
 * `FPCount`/`~MaxFingerCount`, `FaceCount`/`~MaxFaceCount` (keys already without their `~`).
 */
export function parseInfoDetails(details: Readonly<Record<string, string>>): TerminalInfo {
  return defined({
    model: label(details.DeviceName),
    firmware: label(details.FWVersion ?? details.FirmVer),
    platform: label(details.Platform),
    ipAddress: label(details.IPAddress),
    users: count(details.UserCount),
    fingerprints: count(details.FPCount),
    faces: count(details.FaceCount),
    attendanceRecords: count(details.TransactionCount ?? details.AttLogCount),
    userCapacity: count(details.MaxUserCount),
    fingerprintCapacity: count(details.MaxFingerCount),
    faceCapacity: count(details.MaxFaceCount),
    attendanceCapacity: count(details.MaxAttLogCount),
  })
}

/** How full the attendance log is, 0..1, when both figures are known. */
export function attendanceLogUse(info: TerminalInfo): number | undefined {
  const { attendanceRecords, attendanceCapacity } = info
  if (attendanceRecords === undefined || !attendanceCapacity) return undefined
  return attendanceRecords / attendanceCapacity
}
