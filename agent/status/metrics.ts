import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client'
import type { EventBus } from '../events.js'

/** Prometheus metrics of the agent (GET /metrics), in a registry of its own. */
export function createMetrics(
  events: EventBus,
  read: () => {
    spoolPunches: number
    spoolBytes: number
    deadLetters: number
    spoolFull: boolean
    devicesUp: Record<string, boolean>
  },
): Registry {
  const registry = new Registry()
  // The event-loop delay histogram samples every 10 ms by default: 100 wakeups a second on an idle
  // site PC. Once a second still shows a blocked loop, which is what the metric is for.
  collectDefaultMetrics({ register: registry, prefix: 'hajri_agent_', eventLoopMonitoringPrecision: 1000 })
  const spooled = new Counter({
    name: 'hajri_agent_punches_spooled_total',
    help: 'Punches stored in the spool.',
    labelNames: ['device'],
    registers: [registry],
  })
  const malformed = new Counter({
    name: 'hajri_agent_frames_malformed_total',
    help: 'Device frames that could not be read.',
    labelNames: ['device'],
    registers: [registry],
  })
  const deadLettered = new Counter({
    name: 'hajri_agent_dead_letters_added_total',
    help: 'Entries added to dead letters.',
    labelNames: ['reason'],
    registers: [registry],
  })
  const forwarded = new Counter({
    name: 'hajri_agent_punches_forwarded_total',
    help: 'Punches the cloud accepted.',
    registers: [registry],
  })
  const failures = new Counter({
    name: 'hajri_agent_forward_failures_total',
    help: 'Requests to the cloud that failed and will be retried.',
    registers: [registry],
  })
  events.on('punchesSpooled', (e) => spooled.inc({ device: e.deviceId }, e.count))
  events.on('frameMalformed', (e) => malformed.inc({ device: e.deviceId }))
  events.on('deadLettered', (e) => deadLettered.inc({ reason: e.reason }, e.count))
  events.on('punchesForwarded', (e) => forwarded.inc(e.count))
  events.on('forwardFailed', () => failures.inc())

  const gauge = (name: string, help: string, value: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(value())
      },
    })
  gauge('hajri_agent_spool_punches', 'Punches waiting for the cloud.', () => read().spoolPunches)
  gauge('hajri_agent_spool_bytes', 'Bytes of the spool on disk.', () => read().spoolBytes)
  gauge('hajri_agent_dead_letters', 'Entries in dead letters.', () => read().deadLetters)
  gauge('hajri_agent_spool_full', '1 while the spool refuses punches.', () => (read().spoolFull ? 1 : 0))
  new Gauge({
    name: 'hajri_agent_device_up',
    help: '1 while a device transport is connected.',
    labelNames: ['device'],
    registers: [registry],
    collect() {
      for (const [device, up] of Object.entries(read().devicesUp)) this.set({ device }, up ? 1 : 0)
    },
  })
  return registry
}
