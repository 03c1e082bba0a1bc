import { AttendanceCorrections } from './attendance-corrections.js'
import { currentMonth, isMonth } from './attendance-month.js'
import { AttendanceMonthView } from './attendance-month-view.js'
import { AttendanceSettings } from './attendance-settings.js'
import { useConsole } from './console-context.js'
import { Link } from './link.js'
import { PageLayout } from './page-layout.js'
import { navigate, useLocation } from './router.js'

const TABS = [
  { tab: '', label: 'Month' },
  { tab: 'corrections', label: 'Corrections' },
  { tab: 'settings', label: 'Settings' },
] as const
type Tab = (typeof TABS)[number]['tab']

/**
 * Attendance: a month of day records per employee, a day's detail and its corrections, the corrections
 * made, and the settings days are computed by. The part shown, the month and the employee are kept in
 * the address (`/attendance?tab=settings&month=2026-11`), so a link can point at them.
 */
export function AttendancePage() {
  const { tenant } = useConsole()
  const { search } = useLocation()
  const tab = (TABS.find((t) => t.tab === search.get('tab'))?.tab ?? '') as Tab
  const asked = search.get('month') ?? ''
  const month = isMonth(asked) ? asked : currentMonth(tenant.timeZone)
  const employeeCode = search.get('employeeCode') ?? ''

  const addressOf = (changes: Record<string, string>) => {
    const next = new URLSearchParams(search)
    for (const [name, value] of Object.entries(changes)) {
      if (value === '') next.delete(name)
      else next.set(name, value)
    }
    const text = next.toString()
    return `/attendance${text ? `?${text}` : ''}`
  }

  return (
    <PageLayout
      title="Attendance"
      lead={
        <>
          Each employee's days as computed from their punches: present, half day, absent, incomplete or off,
          with the hours worked, late entry, early exit and overtime. Times are in the organisation's time
          zone, {tenant.timeZone}.
        </>
      }
    >
      <nav aria-label="Attendance">
        <ul className="attendance-tab-list">
          {TABS.map((t) => (
            <li key={t.tab}>
              <Link
                to={addressOf({ tab: t.tab })}
                className="attendance-tab"
                aria-current={t.tab === tab ? 'page' : undefined}
              >
                {t.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      {tab === '' ? (
        <AttendanceMonthView
          month={month}
          employeeCode={employeeCode}
          onFilter={(name, value) => navigate(addressOf({ [name]: value }), { replace: true })}
        />
      ) : null}
      {tab === 'corrections' ? <AttendanceCorrections /> : null}
      {tab === 'settings' ? <AttendanceSettings month={month} /> : null}
    </PageLayout>
  )
}
