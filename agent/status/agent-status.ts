import type { UnknownDevice } from '../inputs/device-report.js'
import type { DeviceStatus, ForwardingStatus } from './status-tracker.js'

/** What GET /status answers and `hajri-agent status` shows. */
export interface AgentStatus {
  agent: {
    site: string
    pid: number
    startedAt: string
    uptimeSeconds: number
    /** `hajri-agent --version`; set by the status server, absent from agents before it was shown. */
    version?: string
  }
  spool: {
    punches: number
    chunks: number
    bytes: number
    maxBytes: number
    /** When the oldest punch still waiting for the cloud was spooled. */
    oldestUnsentAt: string | null
    oldestUnsentAgeSeconds: number | null
    full: boolean
    fullSince: string | null
    quarantinedChunks: number
  }
  deadLetters: { count: number }
  devices: DeviceStatus[]
  /** Terminals that pushed with a serial number no device has: refused, their records kept on them. */
  unknownDevices: UnknownDevice[]
  forwarding: ForwardingStatus & {
    /** While a backlog drains: how big it was at its largest, and when it should be gone. */
    backlog: { peak: number; remaining: number; etaSeconds: number | null } | null
  }
  /** What needs a person: empty when all is well. */
  alarms: string[]
}
