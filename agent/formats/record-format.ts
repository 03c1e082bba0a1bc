import type { DeviceConfig, Transport } from '../config/schema.js'
import type { FrameParse } from '../punch/device-punch.js'
import { csvPunchParser } from './csv-punch.js'
import { parseJsonPunches } from './json-punch.js'
import { parseZkAttlog } from './zk-attlog.js'

export type RecordFormat = (frame: string) => FrameParse

/** The parser for what a device sends over a transport, as its configuration names it. */
export function recordFormat(device: DeviceConfig, transport: Transport): RecordFormat {
  // ADMS carries ATTLOG lines by definition (Attendance PUSH: table=ATTLOG); the ZK input writes the
  // binary records it reads as the same lines (zk-input.ts).
  const name =
    transport === 'adms' || transport === 'zk'
      ? 'zk-attlog'
      : transport === 'mqtt'
        ? (device.mqtt?.format ?? 'json')
        : (device.serial?.format ?? 'zk-attlog')
  switch (name) {
    case 'zk-attlog':
      return parseZkAttlog
    case 'json':
      return parseJsonPunches
    case 'csv': {
      const csv = device.serial?.csv
      if (!csv) throw new Error(`device ${device.id}: format csv needs serial.csv.columns`)
      return csvPunchParser(csv.columns, csv.delimiter)
    }
  }
}
