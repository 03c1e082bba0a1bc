/**
 * Which parser a device's frames get (docs/decisions/0029-device-kinds-one-intake.md): mqtt json | zk-attlog;
 * serial zk-attlog | csv | json.
 */
import { describe, expect, it } from 'vitest'
import type { DeviceConfig } from '../../../agent/config/schema.js'
import { parseJsonPunches } from '../../../agent/formats/json-punch.js'
import { recordFormat } from '../../../agent/formats/record-format.js'
import { parseZkAttlog } from '../../../agent/formats/zk-attlog.js'

const serial = (format: 'zk-attlog' | 'csv' | 'json', csv?: NonNullable<DeviceConfig['serial']>['csv']) => ({
  path: '/dev/ttyUSB0',
  baudRate: 9600,
  dataBits: 8 as const,
  parity: 'none' as const,
  stopBits: 1 as const,
  framing: { type: 'line' as const, delimiter: '\n' },
  format,
  ...(csv ? { csv } : {}),
})

describe('recordFormat', () => {
  it('reads each transport with the format its configuration names', () => {
    const device: DeviceConfig = {
      id: 'gate-1',
      mqtt: { topic: 'punches/gate-1', format: 'zk-attlog' },
      serial: serial('json'),
    }
    expect(recordFormat(device, 'mqtt')).toBe(parseZkAttlog)
    expect(recordFormat(device, 'serial')).toBe(parseJsonPunches)
  })

  it('reads CSV with the device column map and delimiter', () => {
    const device: DeviceConfig = {
      id: 'csv-reader',
      serial: serial('csv', { delimiter: ';', columns: { employeeCode: 1, punchType: 0 } }),
    }
    expect(recordFormat(device, 'serial')('OUT;E9').punches).toEqual([
      { employeeCode: 'E9', punchType: 'OUT' },
    ])
  })

  it('refuses CSV without a column map, naming the device', () => {
    expect(() => recordFormat({ id: 'csv-reader', serial: serial('csv') }, 'serial')).toThrow(
      'device csv-reader: format csv needs serial.csv.columns',
    )
  })
})
