/**
 * Devices of the embedded broker bound to the user they connect as (devices[].mqtt.username):
 * without the binding, any of the broker's users may publish that device's punches. The shipped
 * example binds every MQTT device, and check-config warns about a device left unbound while the
 * broker has users. Real files, the real loader and the real CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadAgentConfig } from '../../../agent/config/load.js'
import { runAgent } from '../commands/run-agent.js'
import { ConfigDir, EXAMPLE_ENV, exampleInto, minimalDoc } from '../config/config-fixture.js'

let files: ConfigDir
beforeAll(async () => {
  files = await ConfigDir.create()
})
afterAll(async () => {
  await files.remove()
})

async function checkConfig(file: string, env: NodeJS.ProcessEnv, ...more: string[]) {
  return runAgent(files.dir, env, 'check-config', '--config', file, ...more)
}

describe('devices bound to broker users', () => {
  it('security review #10: deploy/agent.example.yaml binds each MQTT device to a user of its broker, and check-config has nothing to warn about', async () => {
    const file = await exampleInto(files)
    const config = await loadAgentConfig(file, EXAMPLE_ENV)
    const users = new Set(config.mqtt?.embedded?.users.map((u) => u.username))
    expect(users.size).toBeGreaterThan(0)
    const mqttDevices = config.devices.filter((d) => d.mqtt)
    expect(mqttDevices.length).toBeGreaterThan(0)
    for (const device of mqttDevices) {
      expect(device.mqtt?.username, device.id).toBeDefined()
      expect(users.has(device.mqtt?.username ?? ''), device.id).toBe(true)
    }
    const result = await checkConfig(file, EXAMPLE_ENV)
    expect(result.code).toBe(0)
    expect(result.stderr).toBe('')
  })

  it('security review #10: check-config warns about a device with no username when the embedded broker has users, and not without users', async () => {
    const doc = minimalDoc()
    doc.mqtt = { embedded: { users: [{ username: 'gate-1', password: 'pw-gate-1' }] } }
    doc.devices = [
      { id: 'gate-1', mqtt: { topic: 'punches/gate-1', username: 'gate-1' } },
      { id: 'canteen', mqtt: { topic: 'punches/canteen' } },
    ]
    const file = await files.writeConfig(doc, 'unbound.yaml')
    const text = await checkConfig(file, {})
    expect(text.code).toBe(0)
    expect(text.stderr).toMatch(
      /^warning: devices\[1\]\.mqtt\.username: is not set, so any of the embedded broker's users may publish canteen's punches/m,
    )
    expect(text.stderr).not.toContain('devices[0]')
    const json = JSON.parse((await checkConfig(file, {}, '--json')).stdout) as {
      warnings: { path: string }[]
    }
    expect(json.warnings.map((w) => w.path)).toContain('devices[1].mqtt.username')

    // No users: everyone may connect anyway (the broker warns about that); nothing to bind to.
    doc.mqtt = { embedded: { users: [] } }
    doc.devices[0].mqtt.username = undefined
    delete doc.devices[0].mqtt.username
    const open = await checkConfig(await files.writeConfig(doc, 'open.yaml'), {})
    expect(open.stderr).not.toContain('mqtt.username')
  })
})
