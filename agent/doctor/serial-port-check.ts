import { stat } from 'node:fs/promises'
import type { DeviceConfig } from '../config/schema.js'
import { type CheckOutcome, describeError, fail, pass, warn } from './check-result.js'
import type { RunningAgent } from './running-agent.js'
import { stepSignal, untilAborted } from './step-timeout.js'

type SerialSettings = NonNullable<DeviceConfig['serial']>

const FIND_PORTS =
  'is the adapter plugged in? list the ports (Linux: ls -l /dev/serial/by-id/; Windows: Device Manager > Ports) and fix serial.path'

/**
 * The device's serial port exists and opens with its line settings (serialport, as the agent
 * opens it), and is closed again at once. While the agent runs it holds the port (serialport
 * locks it), so its own view of the device is reported instead.
 */
export async function checkSerialPort(
  deviceId: string,
  serial: SerialSettings,
  agent: Promise<RunningAgent>,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<CheckOutcome> {
  const running = await agent
  if (running.running) {
    const device = running.status.devices.find((d) => d.id === deviceId)
    if (device?.state === 'connected') return pass(`${serial.path} is open in the running agent`)
    return fail(
      `the running agent reports ${deviceId} ${device?.state ?? 'unknown'}${device?.detail ? ` (${device.detail})` : ''}`,
      FIND_PORTS,
    )
  }
  if (process.platform !== 'win32') {
    try {
      await stat(serial.path)
    } catch (err) {
      return fail(`${serial.path} does not exist (${describeError(err)})`, FIND_PORTS)
    }
  }
  let SerialPort: typeof import('serialport').SerialPort
  try {
    SerialPort = (await import('serialport')).SerialPort
  } catch (err) {
    return warn(
      `serial ports cannot be opened on this machine: serialport's native bindings do not load (${describeError(err)})`,
      'reinstall hajri-agent for this platform (npm ci), so that @serialport/bindings-cpp is built for it',
    )
  }
  const port = new SerialPort({
    path: serial.path,
    baudRate: serial.baudRate,
    dataBits: serial.dataBits,
    parity: serial.parity,
    stopBits: serial.stopBits,
    autoOpen: false,
  })
  port.on('error', () => {})
  try {
    await untilAborted(
      new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve()))),
      stepSignal(signal, timeoutMs),
      `opening ${serial.path}`,
    )
  } catch (err) {
    if (port.isOpen) port.close(() => {})
    const reason = describeError(err)
    return fail(
      `${serial.path} does not open (${reason})`,
      /EACCES|permission/i.test(reason)
        ? "this user may not open it: add the agent's user to the port's group (Linux: sudo usermod -aG dialout hajri)"
        : /lock|busy/i.test(reason)
          ? 'another program holds the port (a terminal program, another agent): close it'
          : FIND_PORTS,
    )
  }
  await new Promise<void>((resolve) => port.close(() => resolve()))
  return pass(`${serial.path} opens at ${serial.baudRate} baud`)
}
