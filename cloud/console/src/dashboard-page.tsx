import type { ApiClient } from './api-client.js'
import type { DayDeliveries, HourCount } from './api-types.js'
import { type Bar, BarChart } from './bar-chart.js'
import { ErrorNotice } from './error-notice.js'
import { Link } from './link.js'
import { useLoaded } from './use-loaded.js'

/** "2026-11-21T09:00:00+05:30" → "09:00", read as the server wrote it (the tenant's time zone). */
const hourOf = (hour: string) => hour.slice(11, 16)
const dayOf = (day: string) => day.slice(0, 10)

function percent(value: number): string {
  return `${Math.round(value)}%`
}

async function loadDashboard(api: ApiClient) {
  const [p, d] = await Promise.all([
    api.get<{ data: HourCount[]; timeZone: string }>('/dashboard/punches-per-hour', { hours: 24 }),
    api.get<{ data: DayDeliveries[] }>('/dashboard/webhook-deliveries', { days: 7 }),
  ])
  return { punches: p.data, timeZone: p.timeZone, deliveries: d.data }
}

/** Punches per hour over a day, and how many webhook deliveries succeeded each day of the week. */
export function DashboardPage() {
  const { data, error } = useLoaded(loadDashboard)
  const punches = data?.punches
  const deliveries = data?.deliveries
  const timeZone = data?.timeZone ?? ''

  const totalPunches = punches?.reduce((sum, h) => sum + h.count, 0) ?? 0
  const punchBars: Bar[] = (punches ?? []).map((h) => ({
    label: hourOf(h.hour).slice(0, 2),
    longLabel: `${dayOf(h.hour)} ${hourOf(h.hour)}`,
    value: h.count,
  }))
  // Failed deliveries are still being retried: only those that succeeded or were given up on count.
  const finished = (d: DayDeliveries) => d.succeeded + d.exhausted
  const weekFinished = deliveries?.reduce((sum, d) => sum + finished(d), 0) ?? 0
  const weekSucceeded = deliveries?.reduce((sum, d) => sum + d.succeeded, 0) ?? 0
  const rateBars: Bar[] = (deliveries ?? []).map((d) => ({
    label: dayOf(d.day).slice(5),
    longLabel: `${dayOf(d.day)}: ${d.succeeded} delivered, ${d.failed} failed and retrying, ${d.exhausted} given up, ${d.pending} waiting`,
    value: finished(d) === 0 ? null : (100 * d.succeeded) / finished(d),
  }))

  return (
    <section>
      <h1 tabIndex={-1}>Dashboard</h1>
      <ErrorNotice error={error} />
      {punches && deliveries ? (
        <>
          <div className="tiles">
            <div className="tile">
              <p className="tile-number">{totalPunches.toLocaleString()}</p>
              <p>punches in the last 24 hours</p>
            </div>
            <div className="tile">
              <p className="tile-number">
                {weekFinished === 0 ? '—' : percent((100 * weekSucceeded) / weekFinished)}
              </p>
              <p>
                of webhook deliveries succeeded in 7 days (<Link to="/deliveries">delivery log</Link>)
              </p>
            </div>
          </div>
          <div className="charts">
            <BarChart
              title={`Punches per hour, last 24 hours (${timeZone} time)`}
              summary={
                totalPunches === 0
                  ? 'No punches in the last 24 hours.'
                  : `${totalPunches} punches in the last 24 hours; the busiest hour had ${Math.max(...punches.map((h) => h.count))}.`
              }
              bars={punchBars}
              format={(v) => v.toLocaleString()}
              valueHeading="Punches"
              whole
            />
            <BarChart
              title="Webhook deliveries that succeeded, per day"
              summary={
                weekFinished === 0
                  ? 'No webhook deliveries were finished in the last 7 days.'
                  : `${weekSucceeded} of ${weekFinished} finished deliveries succeeded in the last 7 days.`
              }
              bars={rateBars}
              format={percent}
              max={100}
              valueHeading="Succeeded"
            />
          </div>
          {totalPunches === 0 && weekFinished === 0 ? (
            <p>
              Nothing has happened yet. Connect a site agent with an <Link to="/oauth-apps">OAuth app</Link>,
              give your HR system an <Link to="/keys">API key</Link>, or add a{' '}
              <Link to="/webhooks">webhook</Link>.
            </p>
          ) : null}
        </>
      ) : error ? null : (
        <p aria-busy="true">Loading…</p>
      )}
    </section>
  )
}
