import { type ComponentType, useEffect, useRef } from 'react'
import { ApiKeysPage } from './api-keys-page.js'
import { AttendancePage } from './attendance-page.js'
import { AuditPage } from './audit-page.js'
import { ChangePasswordPage } from './change-password-page.js'
import { useConsole } from './console-context.js'
import { DashboardPage } from './dashboard-page.js'
import { DeliveriesPage } from './deliveries-page.js'
import { EmployeesPage } from './employees-page.js'
import { Link } from './link.js'
import { NotFoundPage } from './not-found-page.js'
import { OAuthAppsPage } from './oauth-apps-page.js'
import { useLocation } from './router.js'
import { UsersPage } from './users-page.js'
import { WebhooksPage } from './webhooks-page.js'

interface PageEntry {
  path: string
  label: string
  page: ComponentType
}

/** Every page, in the order of the navigation. */
const PAGES: PageEntry[] = [
  { path: '/', label: 'Dashboard', page: DashboardPage },
  { path: '/keys', label: 'API keys', page: ApiKeysPage },
  { path: '/oauth-apps', label: 'OAuth apps', page: OAuthAppsPage },
  { path: '/webhooks', label: 'Webhooks', page: WebhooksPage },
  { path: '/deliveries', label: 'Deliveries', page: DeliveriesPage },
  { path: '/employees', label: 'Employees', page: EmployeesPage },
  { path: '/attendance', label: 'Attendance', page: AttendancePage },
  { path: '/audit', label: 'Audit log', page: AuditPage },
  { path: '/users', label: 'Users', page: UsersPage },
]

const ROLE_NAMES = { owner: 'Owner', admin: 'Admin', viewer: 'Viewer (read only)' } as const

/** The frame around every page: a skip link, the navigation, who is signed in, the page. */
export function Shell({ onSignOut }: { onSignOut: () => Promise<void> }) {
  const { user, tenant } = useConsole()
  const { path } = useLocation()
  const entry = PAGES.find((p) => p.path === path)
  const Page = path === '/account' ? AccountPage : (entry?.page ?? NotFoundPage)

  // A new page is announced by moving focus to its heading (not on the first load).
  const first = useRef(true)
  useEffect(() => {
    if (first.current) {
      first.current = false
      return
    }
    document.querySelector<HTMLElement>('main h1')?.focus()
    const title = entry?.label ?? (path === '/account' ? 'Your account' : 'Not found')
    document.title = `${title} · Hajri console`
  }, [path, entry])

  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">
          Hajri console <span className="tenant-name">{tenant.name}</span>{' '}
          <span className="tenant-id">{tenant.id}</span>
        </span>
        <nav aria-label="Console">
          <ul>
            {PAGES.map((p) => (
              <li key={p.path}>
                <Link to={p.path} aria-current={p.path === path ? 'page' : undefined}>
                  {p.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="whoami">
          <Link to="/account" aria-current={path === '/account' ? 'page' : undefined}>
            {user.email}
          </Link>{' '}
          <span className="muted">{ROLE_NAMES[user.role]}</span>{' '}
          <button type="button" onClick={() => void onSignOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Page />
      </main>
    </>
  )
}

function AccountPage() {
  return <ChangePasswordPage />
}
