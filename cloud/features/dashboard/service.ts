import {
  type DeliveriesPerDay,
  MAX_DASHBOARD_DAYS,
  MAX_DASHBOARD_HOURS,
  type PunchesPerHour,
} from '../../../shared/dashboard.js'
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../../shared/webhooks.js'
import { AppError } from '../../app-error.js'
import type { TenantContext } from '../../auth/tenant-context.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import type { DashboardStore } from './store.js'
import { DAY_MICROS, dayWindow, HOUR_MICROS, hourWindow } from './zone-calendar.js'

/** A bound, checked here too: it is what keeps one request's work small, whoever calls. */
function within(name: 'hours' | 'days', value: number, max: number): number {
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new AppError('validation_failed', `${name}: must be a whole number from 1 to ${max}`, {
      errors: [{ in: 'query', pointer: `#/${name}`, message: `must be from 1 to ${max}` }],
    })
  }
  return value
}

/** The console's dashboard: punches per hour and webhook delivery outcomes per day. */
export class DashboardService {
  constructor(
    private readonly deps: { stores: UnitOfWork<{ dashboard: DashboardStore }>; now: () => number },
  ) {}

  /** Punches per hour of the tenant's clock, by when they happened, over the last `hours` hours. */
  async punchesPerHour(tenant: TenantContext, hours: number): Promise<PunchesPerHour> {
    const window = hourWindow(this.deps.now(), within('hours', hours, MAX_DASHBOARD_HOURS), tenant.timeZone)
    const rows = await this.deps.stores.read.dashboard.punchCounts(tenant.id, {
      from: window.startMicros,
      to: window.endMicros,
      origin: window.startMicros,
      width: HOUR_MICROS,
      offsets: [{ untilMicros: undefined, offsetMicros: 0 }],
    })
    const counts = new Map(rows.map((r) => [Number(r.bucket), Number(r.count)]))
    return {
      timeZone: tenant.timeZone,
      data: window.labels.map((hour, i) => ({ hour, count: counts.get(i) ?? 0 })),
    }
  }

  /** Deliveries created on each of the tenant's last `days` days, by their status now. */
  async deliveriesPerDay(tenant: TenantContext, days: number): Promise<DeliveriesPerDay> {
    const window = dayWindow(this.deps.now(), within('days', days, MAX_DASHBOARD_DAYS), tenant.timeZone)
    const rows = await this.deps.stores.read.dashboard.deliveryCounts(tenant.id, {
      from: window.startMicros,
      to: window.endMicros,
      origin: window.firstWallMicros,
      width: DAY_MICROS,
      offsets: window.offsets,
    })
    const data = window.labels.map((day) => ({ day, succeeded: 0, failed: 0, exhausted: 0, pending: 0 }))
    for (const row of rows) {
      const entry = data[Number(row.bucket)]
      // Outside only where a zone's clock goes back across midnight: such a moment is left out.
      if (entry && (DELIVERY_STATUSES as readonly string[]).includes(row.status)) {
        entry[row.status as DeliveryStatus] += Number(row.count)
      }
    }
    return { timeZone: tenant.timeZone, data }
  }
}
