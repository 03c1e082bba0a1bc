import { describe, expect, it } from 'vitest'
import {
  attendanceLogUse,
  parseInfoDetails,
  parseInfoParameter,
} from '../../../../agent/inputs/adms/terminal-info.js'

describe("a terminal's figures", () => {
  it('reads the INFO parameter of a poll in its order', () => {
    expect(parseInfoParameter('Ver 8.0.4.2-20191105,12,10,1234,192.168.1.201,10,7,15,3,111')).toEqual({
      firmware: 'Ver 8.0.4.2-20191105',
      users: 12,
      fingerprints: 10,
      attendanceRecords: 1234,
      ipAddress: '192.168.1.201',
      faces: 3,
    })
  })

  it('leaves out what is missing or not a count, so a merge keeps what was known', () => {
    expect(parseInfoParameter('Ver 6.60,,x,')).toEqual({ firmware: 'Ver 6.60' })
    expect(parseInfoParameter('')).toEqual({})
  })

  it('reads the details of an INFO result', () => {
    expect(
      parseInfoDetails({
        DeviceName: 'SpeedFace-V5L',
        FWVersion: 'ZAM180-NF-Ver1.1.17',
        Platform: 'ZAM180_TFT',
        UserCount: '2',
        MaxUserCount: '6000',
        FPCount: '0',
        MaxFingerCount: '6000',
        FaceCount: '2',
        MaxFaceCount: '1200',
        TransactionCount: '0',
        MaxAttLogCount: '200000',
        IPAddress: '192.168.1.235',
      }),
    ).toEqual({
      model: 'SpeedFace-V5L',
      firmware: 'ZAM180-NF-Ver1.1.17',
      platform: 'ZAM180_TFT',
      ipAddress: '192.168.1.235',
      users: 2,
      fingerprints: 0,
      faces: 2,
      attendanceRecords: 0,
      userCapacity: 6000,
      fingerprintCapacity: 6000,
      faceCapacity: 1200,
      attendanceCapacity: 200000,
    })
  })

  it('keeps labels printable and short', () => {
    expect(parseInfoDetails({ DeviceName: `K40\u0000\u001b[31m${'x'.repeat(200)}` }).model).toHaveLength(64)
  })

  it('says how full the attendance log is when both figures are known', () => {
    expect(attendanceLogUse({ attendanceRecords: 85_000, attendanceCapacity: 100_000 })).toBe(0.85)
    expect(attendanceLogUse({ attendanceRecords: 85_000 })).toBeUndefined()
    expect(attendanceLogUse({ attendanceRecords: 5, attendanceCapacity: 0 })).toBeUndefined()
  })
})
