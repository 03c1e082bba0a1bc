import type { Component } from '../component.js'
import { AdmsInput } from './adms/adms-input.js'
import type { InputContext } from './input-context.js'
import { MqttEmbeddedInput } from './mqtt-embedded-input.js'
import { MqttExternalInput } from './mqtt-external-input.js'
import { SerialInput } from './serial-input.js'
import { ZkInput } from './zk/zk-input.js'

/**
 * The device inputs a configuration asks for: a SerialInput per serial device, the MQTT broker or
 * client, the ADMS listener for push terminals, and the reader of ZK terminals on port 4370.
 */
export function createInputs({ config, sink, events, log }: InputContext): Component[] {
  const inputs: Component[] = []
  for (const device of config.devices) {
    if (device.serial)
      inputs.push(new SerialInput({ deviceId: device.id, serial: device.serial, sink, events, log }))
  }
  if (config.mqtt?.embedded) {
    inputs.push(
      new MqttEmbeddedInput({ config: config.mqtt.embedded, devices: config.devices, sink, events, log }),
    )
  }
  if (config.mqtt?.external) {
    inputs.push(
      new MqttExternalInput({ config: config.mqtt.external, devices: config.devices, sink, events, log }),
    )
  }
  if (config.adms) {
    inputs.push(
      new AdmsInput({
        config: config.adms,
        devices: config.devices,
        siteTimeZone: config.site.timezone,
        spoolDir: config.spool.dir,
        sink,
        events,
        log,
      }),
    )
  }
  if (config.devices.some((d) => d.zk)) {
    inputs.push(
      new ZkInput({
        devices: config.devices,
        siteTimeZone: config.site.timezone,
        spoolDir: config.spool.dir,
        sink,
        events,
        log,
      }),
    )
  }
  return inputs
}
