import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client'
import type { EventBus } from '../events.js'
import type { DeviceStatus } from './status-tracker.js'

/** What the gauges read when scraped. */
export interface MetricsSnapshot {
  spoolPunches: number
  spoolBytes: number
  deadLetters: number
  spoolFull: boolean
  devices: DeviceStatus[]
  /** Terminals refused for a serial number no device has. */
  unknownDevices: number
}

/**
 * Prometheus metrics of the agent (GET /metrics), in a registry of its own. Labels are bounded:
 * `device` is a configured device id, never a serial number a stranger sent; ADMS requests are
 * counted by route and outcome, both fixed sets.
 */
export function createMetrics(events: EventBus, read: () => MetricsSnapshot): Registry {
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
  const resent = new Counter({
    name: 'hajri_agent_punches_resent_total',
    help: 'Punches a device sent again that were stored lately already (harmless: the cloud keeps one).',
    labelNames: ['device'],
    registers: [registry],
  })
  const admsRequests = new Counter({
    name: 'hajri_agent_adms_requests_total',
    help: 'Requests of ADMS push terminals, by route and outcome.',
    labelNames: ['route', 'outcome'],
    registers: [registry],
  })
  events.on('punchesSpooled', (e) => spooled.inc({ device: e.deviceId }, e.count))
  events.on('punchesResent', (e) => resent.inc({ device: e.deviceId }, e.count))
  events.on('admsRequest', (e) => admsRequests.inc({ route: e.route, outcome: e.outcome }))
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
  gauge(
    'hajri_agent_unknown_devices',
    'Push terminals refused lately for a serial number no device has.',
    () => read().unknownDevices,
  )
  /** A gauge per device, for the devices that have the figure (the others are left out). */
  const perDevice = (name: string, help: string, value: (d: DeviceStatus) => number | null | undefined) =>
    new Gauge({
      name,
      help,
      labelNames: ['device'],
      registers: [registry],
      collect() {
        this.reset()
        for (const d of read().devices) {
          const v = value(d)
          if (v !== null && v !== undefined) this.set({ device: d.id }, v)
        }
      },
    })
  const seconds = (iso: string | null | undefined) => (iso ? Date.parse(iso) / 1000 : null)
  perDevice('hajri_agent_device_up', '1 while a device transport is connected.', (d) =>
    d.state === 'connected' ? 1 : 0,
  )
  perDevice(
    'hajri_agent_device_clock_skew_seconds',
    "Device clock minus the agent's: read from the device (ZK terminals), else estimated from its last punches.",
    (d) => d.details?.pull?.clockSkewSeconds ?? d.clockSkewSeconds,
  )
  perDevice(
    'hajri_agent_device_last_read_timestamp_seconds',
    "When the agent last read a terminal's whole log (ZK terminals; Unix time).",
    (d) => seconds(d.details?.pull?.lastReadAt),
  )
  perDevice(
    'hajri_agent_device_connection_errors',
    'Sessions with a ZK terminal that failed or were lost since the agent started.',
    (d) => d.details?.pull?.connectionErrors,
  )
  perDevice(
    'hajri_agent_device_last_contact_timestamp_seconds',
    'When a networked terminal last made a request, or answered one (Unix time).',
    (d) => seconds(d.details?.lastContactAt),
  )
  perDevice(
    'hajri_agent_device_records_received',
    'Records a networked terminal uploaded since the agent started.',
    (d) => d.details?.recordsReceived,
  )
  perDevice(
    'hajri_agent_device_users',
    'Users enrolled on the terminal, as it reports.',
    (d) => d.details?.counts.users,
  )
  perDevice(
    'hajri_agent_device_attendance_records',
    'Attendance records held on the terminal, as it reports.',
    (d) => d.details?.counts.attendanceRecords,
  )
  perDevice(
    'hajri_agent_device_attendance_capacity',
    'Attendance records the terminal can hold, as it reports.',
    (d) => d.details?.counts.attendanceCapacity,
  )
  return registry
}
