import { createHash } from 'node:crypto'

/** What a terminal says about itself in a poll's INFO parameter and in the INFO command's result. */
export interface AdmsDeviceInfo {
  /** `~DeviceName`. */
  model: string
  /** `FWVersion`, and the first INFO field. */
  firmware: string
  /** `~Platform`. */
  platform: string
  ip: string
  /** 00:17:61 is ZKTeco's; by default the rest comes from the serial number. */
  mac: string
  users: number
  maxUsers: number
  fingerprints: number
  maxFingerprints: number
  faces: number
  maxFaces: number
  /** `~MaxAttLogCount`: the log's capacity. Beyond it, the oldest acknowledged records are dropped. */
  attLogCapacity: number
  fingerprintAlgorithm: number
  faceAlgorithm: number
  facesPerUser: number
  /** The last INFO field: which functions the terminal has (fingerprint, face, user photo). */
  functionBits: string
}

/** A face-and-fingerprint terminal of the kind eSSL sells, with a few enrolled users. */
export function defaultAdmsDeviceInfo(serialNumber: string): AdmsDeviceInfo {
  const hash = createHash('sha256').update(serialNumber).digest()
  const mac = ['00', '17', '61', ...[0, 1, 2].map((k) => hash[k]!.toString(16).padStart(2, '0'))]
  return {
    model: 'SpeedFace-V5L',
    firmware: 'Ver 8.0.4.2-20191105',
    platform: 'ZMM220_TFT',
    ip: '192.168.1.201',
    mac: mac.join(':').toUpperCase(),
    users: 12,
    maxUsers: 10_000,
    fingerprints: 10,
    maxFingerprints: 10_000,
    faces: 0,
    maxFaces: 6_000,
    attLogCapacity: 100_000,
    fingerprintAlgorithm: 10,
    faceAlgorithm: 7,
    facesPerUser: 15,
    functionBits: '111',
  }
}

/**
 * The INFO query parameter of `GET /iclock/getrequest`: firmware, users, fingerprints, attendance
 * records, IP, fingerprint algorithm, face algorithm, faces per user, faces, function bits.
 */
export function admsInfoParameter(info: AdmsDeviceInfo, records: number): string {
  return [
    info.firmware,
    info.users,
    info.fingerprints,
    records,
    info.ip,
    info.fingerprintAlgorithm,
    info.faceAlgorithm,
    info.facesPerUser,
    info.faces,
    info.functionBits,
  ].join(',')
}

/** The `key=value` lines after `ID=..&Return=0&CMD=INFO` in the INFO command's result. */
export function admsInfoLines(info: AdmsDeviceInfo, records: number): string[] {
  return [
    `~DeviceName=${info.model}`,
    `MAC=${info.mac}`,
    `TransactionCount=${records}`,
    `~MaxAttLogCount=${info.attLogCapacity}`,
    `UserCount=${info.users}`,
    `~MaxUserCount=${info.maxUsers}`,
    `FPCount=${info.fingerprints}`,
    `~MaxFingerCount=${info.maxFingerprints}`,
    `FaceCount=${info.faces}`,
    `~MaxFaceCount=${info.maxFaces}`,
    `FWVersion=${info.firmware}`,
    `IPAddress=${info.ip}`,
    `~Platform=${info.platform}`,
  ]
}
