/**
 * The console in a real Chromium, against a real hajri-cloud and a real
 * webhook receiver. The tests run in order, as one person's visit: sign in, every page, keys, apps,
 * webhooks and deliveries, employees, users, then a viewer, then sign out. Each page is saved as a
 * screenshot in test-results/console/.
 */
import type { BrowserContext, Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { employee } from '../../../support/cloud-harness.js'
import { chromiumAvailability } from './chromium.js'
import { ensureConsoleBuilt } from './console-build.js'
import { buttonNames, ConsoleFixture, eventually, heading } from './console-kit.js'

const chromium = await chromiumAvailability()

const OWNER_EMAIL = 'owner@acme-forge.test'
const OWNER_PASSWORD = 'correct horse battery staple'
const VIEWER_EMAIL = 'viewer@acme-forge.test'
const VIEWER_PASSWORD = 'a viewer chose this passphrase'
const LONG = 120_000

/** The navigation: link text, then the page's heading. */
const PAGES: [string, string][] = [
  ['Dashboard', 'Dashboard'],
  ['API keys', 'API keys'],
  ['OAuth apps', 'OAuth apps'],
  ['Webhooks', 'Webhooks'],
  ['Deliveries', 'Webhook deliveries'],
  ['Employees', 'Employees'],
  ['Attendance', 'Attendance'],
  ['Audit log', 'Audit log'],
  ['Users', 'Users'],
]

/** What a viewer may press: reading, never changing. */
const READ_ONLY_BUTTONS = [
  /^Sign out$/,
  /^Refresh$/,
  /^Search$/,
  /^Filter$/,
  /^Clear filters$/,
  /^Show more$/,
  /^History$/,
  /^Close$/,
  /^Copy client id$/,
  /^Details of delivery dlv_\w+$/,
  // Attendance: the month shown (the tabs and the CSV download are links), and a day's detail.
  /^Previous month, \p{L}+ \d{4}$/u,
  /^Next month, \p{L}+ \d{4}$/u,
  /^Show$/,
  /^E\d{3}, \p{L}{3}, \d{1,2} \p{L}{3} \d{4}: (Present|Half day|Absent|Incomplete|Off), (open|provisional|final|locked)(; [\p{L} ,]+)?$/u,
]

const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '-')

describe.skipIf(chromium.skipReason !== undefined)(
  `the console in Chromium${chromium.skipReason ? ` (skipped: ${chromium.skipReason})` : ''}`,
  () => {
    const fixture = new ConsoleFixture()
    let context: BrowserContext
    let page: Page
    let oneTimePassword: string
    let seedKey: string

    const api = (path: string, init: RequestInit = {}) => fetch(`${fixture.baseUrl}${path}`, init)
    const bearer = (credential: string) => ({ headers: { authorization: `Bearer ${credential}` } })
    const nav = async (link: string, title: string) => {
      await page
        .getByRole('navigation', { name: 'Console' })
        .getByRole('link', { name: link, exact: true })
        .click()
      await page.getByRole('heading', { level: 1, name: title, exact: true }).waitFor()
    }
    /** Loads a page afresh (whatever an earlier test left open), signed in by the session cookie. */
    const open = async (path: string, title: string) => {
      await page.goto(`/console${path}`)
      await page.getByRole('heading', { level: 1, name: title, exact: true }).waitFor()
    }
    const dialog = (name: string) => page.getByRole('dialog', { name, exact: true })
    const tokenFor = (clientId: string, secret: string) =>
      api('/api/oauth/token', {
        method: 'POST',
        headers: {
          // RFC 6749 §2.3.1: form-encoded, then Basic.
          authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials',
      })
    const signIn = async (on: Page, email: string, password: string) => {
      await on.getByLabel('Email', { exact: true }).fill(email)
      await on.getByLabel('Password', { exact: true }).fill(password)
      await on.getByRole('button', { name: 'Sign in' }).click()
    }
    const choosePassword = async (on: Page, current: string, next: string) => {
      await on.getByRole('heading', { name: 'Choose your password' }).waitFor()
      await on.getByLabel('One-time password', { exact: true }).fill(current)
      await on.getByLabel('New password', { exact: true }).fill(next)
      await on.getByLabel('New password again', { exact: true }).fill(next)
      await on.getByRole('button', { name: 'Save new password' }).click()
    }
    /** The list item (card) or table row that holds `text`. */
    const item = (text: string): Locator => page.locator('li.card, tbody tr').filter({ hasText: text })

    beforeAll(async () => {
      await ensureConsoleBuilt()
      await fixture.start()
      const tenant = await fixture.cloud.services.tenants.create({
        name: 'Acme Forge',
        adminEmail: OWNER_EMAIL,
      })
      oneTimePassword = tenant.adminPassword
      await fixture.cloud.upsertEmployees(tenant.tenantId, [
        employee('E001'),
        employee('E002'),
        employee('E003'),
      ])
      seedKey = await fixture.cloud.createApiKey(tenant.tenantId)
      // Attendance settings, for a viewer to read and not change.
      const attendanceAdmin = await fixture.cloud.createApiKey(tenant.tenantId, ['attendance:admin'])
      for (const [url, payload] of [
        ['shifts', { code: 'GEN', start: '09:00', end: '18:00', unpaidBreakMinutes: 60 }],
        ['assignments', { shiftCode: 'GEN', effectiveFrom: '2026-01-01' }],
        ['holidays', { date: '2030-01-26', name: 'Republic Day' }],
      ] as const) {
        const res = await fixture.cloud.app.inject({
          method: 'POST',
          url: `/api/public/v1/attendance/${url}`,
          headers: { authorization: `Bearer ${attendanceAdmin}` },
          payload,
        })
        expect(res.statusCode, res.body).toBe(201)
      }
      // Three punches in the last hours, for the dashboard.
      for (const [i, code] of ['E001', 'E002', 'E003'].entries()) {
        const res = await fixture.cloud.app.inject({
          method: 'POST',
          url: '/api/public/v1/attendance/punches',
          headers: { authorization: `Bearer ${seedKey}`, 'content-type': 'application/json' },
          payload: {
            employeeCode: code,
            punchType: 'IN',
            punchedAt: new Date(Date.now() - (i + 1) * 3_600_000).toISOString(),
            deviceId: 'gate-1',
            externalId: `seed-${code}`,
          },
        })
        expect(res.statusCode, res.body).toBeLessThan(300)
      }
      // The attendance worker makes the days of those punches, and today's of everyone.
      await fixture.cloud.attendanceRounds()
      ;({ context, page } = await fixture.newPage())
    }, LONG)

    afterAll(() => fixture.stop())

    it(
      'signs in: a wrong password is explained, and a one-time password must be replaced before anything else',
      async () => {
        // A link into the console leads to the sign-in page, and back to the page after it.
        await page.goto('/console/webhooks')
        await page.getByRole('heading', { name: 'Sign in to Hajri' }).waitFor()
        await fixture.screenshot(page, '01-sign-in')

        await signIn(page, OWNER_EMAIL, 'not the password at all')
        const refused = await page.getByRole('alert').textContent()
        expect(refused).toContain('That email and password do not match')

        await signIn(page, OWNER_EMAIL, oneTimePassword)
        await page.getByRole('heading', { name: 'Choose your password' }).waitFor()
        expect(await page.getByRole('navigation').count(), 'no page is open before the change').toBe(0)
        await fixture.screenshot(page, '02-choose-password')
        await choosePassword(page, oneTimePassword, OWNER_PASSWORD)
        await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor()

        const cookie = (await context.cookies()).find((c) => c.name === 'hajri_session')
        expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' })
      },
      LONG,
    )

    it(
      'goes through every page from the navigation: each has its heading, takes the focus, and is saved',
      async () => {
        for (const [link, title] of PAGES) {
          await nav(link, title)
          const current = page
            .getByRole('navigation', { name: 'Console' })
            .getByRole('link', { name: link, exact: true })
          expect(await current.getAttribute('aria-current'), link).toBe('page')
          expect(
            await page.evaluate(() => document.activeElement?.tagName),
            `focus on the ${title} heading`,
          ).toBe('H1')
          // Nothing is loading any more (empty states or lists are in), and nothing went wrong.
          await page.locator('[aria-busy="true"]').waitFor({ state: 'detached' })
          expect(await page.getByRole('alert').allTextContents(), title).toEqual([])
          await fixture.screenshot(page, `page-${slug(title)}`)
        }

        // The dashboard's charts: an accessible picture each, and the seeded punches counted.
        await nav('Dashboard', 'Dashboard')
        await page.locator('.tile-number').first().waitFor()
        expect(await page.locator('.tile-number').first().textContent()).toBe('3')
        const charts = page.getByRole('img')
        expect(await charts.count()).toBe(2)
        expect(await charts.first().locator(':scope > title').textContent()).toContain(
          '3 punches in the last 24 hours',
        )
        await fixture.screenshot(page, 'page-dashboard')

        await page.getByRole('link', { name: OWNER_EMAIL }).click()
        await page.getByRole('heading', { level: 1, name: 'Change your password' }).waitFor()
        await fixture.screenshot(page, 'page-account')

        await page.goto('/console/no-such-page')
        await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor()
        await fixture.screenshot(page, 'page-not-found')
      },
      LONG,
    )

    it(
      'creates an API key that works against the public API, shows its last use, and revokes it after a confirmation',
      async () => {
        await open('/keys', 'API keys')
        // The key the test set up with.
        await page.locator('tbody tr').first().waitFor()
        await page.getByRole('button', { name: 'Create API key' }).click()
        const form = dialog('Create an API key')
        await form.getByLabel('Name').fill('Payroll export')
        await form.getByRole('checkbox', { name: /attendance:read/ }).check()
        await form.getByLabel('Expires after').selectOption({ label: '30 days' })
        await form.getByLabel('Requests per minute').fill('120')
        await form.getByRole('button', { name: 'Create key' }).click()

        const created = dialog('API key created')
        const key = await created.getByLabel('API key Payroll export').inputValue()
        expect(key).toMatch(/^hjk_/)
        expect(await created.textContent()).toContain('Never put it in browser')
        await created.getByRole('button', { name: 'Copy', exact: true }).click()
        await created.getByText('Copied.').waitFor()
        expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key)
        await fixture.screenshot(page, 'api-key-created')

        // The key works against the public API.
        const employees = await api('/api/public/v1/employees', bearer(key))
        expect(employees.status).toBe(200)
        const codes = ((await employees.json()) as { data: { employeeCode: string }[] }).data.map(
          (e) => e.employeeCode,
        )
        expect(codes).toEqual(expect.arrayContaining(['E001', 'E002', 'E003']))
        await created.getByRole('button', { name: 'I have stored the key' }).click()
        await created.waitFor({ state: 'detached' })
        const row = item('Payroll export')
        expect(await row.textContent()).toMatch(/Active.*120\/min/)
        expect(await row.textContent()).toContain('employees:read, attendance:read')
        await eventually('the key’s last use in the list', async () => {
          await page.reload()
          await row.waitFor()
          return !(await row.locator('td').nth(4).textContent())?.includes('Never')
        })

        // Revoking asks first; Cancel (which has the focus) changes nothing.
        await row.getByRole('button', { name: 'Revoke Payroll export' }).click()
        const confirm = dialog('Revoke this API key?')
        expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel')
        await fixture.screenshot(page, 'api-key-revoke-confirmation')
        await confirm.getByRole('button', { name: 'Cancel' }).click()
        expect((await api('/api/public/v1/employees', bearer(key))).status).toBe(200)

        await row.getByRole('button', { name: 'Revoke Payroll export' }).click()
        await confirm.getByRole('button', { name: 'Revoke key' }).click()
        await page.getByRole('status').filter({ hasText: 'is revoked' }).waitFor()
        await row.getByText('Revoked').waitFor()
        expect((await api('/api/public/v1/employees', bearer(key))).status).toBe(401)
        await fixture.screenshot(page, 'page-api-keys')
      },
      LONG,
    )

    it(
      'creates an OAuth app that obtains a token, rotates its secret, shows its history, and revokes it',
      async () => {
        await open('/oauth-apps', 'OAuth apps')
        await page.getByText('No OAuth apps yet').waitFor()
        await page.getByRole('button', { name: 'Create OAuth app' }).click()
        const form = dialog('Create an OAuth app')
        await form.getByLabel('Name').fill('Pune plant agent')
        await form.getByRole('checkbox', { name: /attendance:read/ }).check()
        await form.getByRole('button', { name: 'Create app' }).click()

        const created = dialog('OAuth app created')
        const clientId = ((await created.locator('dd code').first().textContent()) ?? '').trim()
        const secret = await created.getByLabel('Client secret').inputValue()
        expect(clientId).toMatch(/^hjc_/)
        await fixture.screenshot(page, 'oauth-app-created')

        const issued = await tokenFor(clientId, secret)
        expect(issued.status).toBe(200)
        const { access_token: token } = (await issued.json()) as { access_token: string }
        expect((await api('/api/public/v1/attendance/punches', bearer(token))).status).toBe(200)
        await created.getByRole('button', { name: 'I have stored the secret' }).click()

        const card = item('Pune plant agent')
        await card.getByRole('button', { name: 'Rotate secret' }).click()
        const rotate = dialog('Rotate the secret')
        await rotate.getByLabel('Keep the old secret working').selectOption({ label: 'Stop it now' })
        await rotate.getByRole('button', { name: 'Rotate secret' }).click()
        const rotated = dialog('New secret')
        const newSecret = await rotated.getByLabel('New client secret of Pune plant agent').inputValue()
        expect(newSecret).not.toBe(secret)
        expect((await tokenFor(clientId, secret)).status, 'the old secret stopped at once').toBe(401)
        expect((await tokenFor(clientId, newSecret)).status).toBe(200)
        await rotated.getByRole('button', { name: 'Done' }).click()

        await card.getByRole('button', { name: 'History' }).click()
        const history = dialog('History of Pune plant agent')
        for (const entry of ['OAuth app created', 'OAuth app secret rotated', 'Access token issued']) {
          await history.getByText(entry).first().waitFor()
        }
        expect(await history.textContent()).toContain(OWNER_EMAIL)
        await fixture.screenshot(page, 'oauth-app-history')
        await history.getByRole('button', { name: 'Close' }).first().click()

        await card.getByRole('button', { name: 'Revoke' }).click()
        await dialog('Revoke this OAuth app?').getByRole('button', { name: 'Revoke app' }).click()
        await card.getByText('Revoked', { exact: true }).first().waitFor()
        expect((await tokenFor(clientId, newSecret)).status).toBe(401)
        await fixture.screenshot(page, 'page-oauth-apps')
      },
      LONG,
    )

    it(
      'registers a webhook endpoint to a local receiver, which receives the test event; the delivery shows in the log',
      async () => {
        const url = fixture.receiver.url('/console-hook')
        await open('/webhooks', 'Webhooks')
        await page.getByText('No webhook endpoints yet').waitFor()
        await page.getByRole('button', { name: 'Add endpoint' }).click()
        const form = dialog('Add a webhook endpoint')
        await form.getByLabel('URL').fill(url)
        await form.getByLabel('Description (optional)').fill('HR system')
        await form.getByRole('radio', { name: 'Only the events I choose' }).check()
        await form.getByRole('checkbox', { name: /employee\.created/ }).check()
        await fixture.screenshot(page, 'webhook-add')
        await form.getByRole('button', { name: 'Add endpoint' }).click()

        const added = dialog('Endpoint added')
        const secret = await added.getByLabel(`Signing secret of ${url}`).inputValue()
        expect(secret).toMatch(/^whsec_/)
        fixture.receiver.verifyAt('/console-hook', secret)
        await added.getByRole('button', { name: 'Done' }).click()

        const card = item(url)
        expect(await card.textContent()).toContain('attendance.punch.created, employee.created')
        await card.getByRole('button', { name: 'Send test event' }).click()
        await page.getByRole('status').filter({ hasText: 'Test event sent' }).waitFor()
        await fixture.receiver.waitFor(() => fixture.receiver.to('/console-hook').length >= 1)
        const [received] = fixture.receiver.to('/console-hook')
        expect(received?.json?.type).toBe('webhook.test')
        expect(received?.verifiedWith, 'signed with the secret the console showed').toEqual([secret])

        // From the notice to this endpoint's deliveries.
        await page.getByRole('link', { name: 'See its deliveries' }).click()
        await page.getByRole('heading', { level: 1, name: 'Webhook deliveries' }).waitFor()
        expect(await page.getByLabel('Endpoint', { exact: true }).inputValue()).toMatch(/^whk_/)
        const row = page.locator('tbody tr').filter({ hasText: 'webhook.test' })
        await eventually('the delivery to show as delivered', async () => {
          await page.getByRole('button', { name: 'Refresh' }).click()
          return (await row.textContent({ timeout: 1000 }))?.includes('Delivered')
        })
        await fixture.screenshot(page, 'page-webhook-deliveries')
        await row.getByRole('button', { name: /^Details of delivery/ }).click()
        const detail = dialog('Delivery')
        await detail.getByText('Attempt 1').waitFor()
        const text = (await detail.textContent()) ?? ''
        expect(text).toContain('HTTP 204')
        expect(text).toContain(`webhook-id: ${received?.headers['webhook-id']}`)
        expect(text).toContain('"type": "webhook.test"')
        await fixture.screenshot(page, 'delivery-detail')
        await detail.getByRole('button', { name: 'Close' }).last().click()

        // Pause and resume; reveal the secret (after a confirmation).
        await nav('Webhooks', 'Webhooks')
        await card.getByRole('button', { name: 'Pause' }).click()
        await card.getByText('Paused', { exact: true }).waitFor()
        await card.getByRole('button', { name: 'Resume' }).click()
        await card.getByText('Active', { exact: true }).waitFor()
        await card.getByRole('button', { name: 'Reveal secret' }).click()
        await dialog('Show the signing secret?').getByRole('button', { name: 'Show secret' }).click()
        const shown = dialog('Signing secret')
        expect(await shown.getByLabel(`Signing secret of ${url}`).inputValue()).toBe(secret)
        await shown.getByRole('button', { name: 'Done' }).click()
        await fixture.screenshot(page, 'page-webhooks')
      },
      LONG,
    )

    it(
      'retries a delivery made to fail from the log, and the retry is in the audit log; replays failed ones since a time',
      async () => {
        const receiver = fixture.receiver
        receiver.respondAt('/failing', { status: 500, body: 'receiver is down' })
        const url = receiver.url('/failing')
        await open('/webhooks', 'Webhooks')
        await page.getByRole('button', { name: 'Add endpoint' }).click()
        await dialog('Add a webhook endpoint').getByLabel('URL').fill(url)
        await dialog('Add a webhook endpoint').getByRole('button', { name: 'Add endpoint' }).click()
        await dialog('Endpoint added').getByRole('button', { name: 'Done' }).click()
        await item(url).getByRole('button', { name: 'Send test event' }).click()
        await receiver.waitFor(() => receiver.to('/failing').length >= 1)

        await nav('Deliveries', 'Webhook deliveries')
        await page.getByLabel('Status').selectOption({ label: 'Failed, gave up' })
        const failed = page.locator('tbody tr').filter({ hasText: url })
        await eventually('the failed delivery in the log', async () => {
          await page.getByRole('button', { name: 'Refresh' }).click()
          return (await failed.count()) === 1
        })
        await failed.getByRole('button', { name: /^Details of delivery/ }).click()
        const detail = dialog('Delivery')
        await detail.getByText('receiver is down').waitFor()
        expect(await detail.textContent()).toContain('HTTP 500')
        const deliveryId = ((await detail.locator('dd code').last().textContent()) ?? '').trim()
        expect(deliveryId).toMatch(/^dlv_/)
        await fixture.screenshot(page, 'delivery-failed')

        receiver.respondAt('/failing', { status: 204 })
        await detail.getByRole('button', { name: 'Retry now' }).click()
        await detail.getByText('Retry started').waitFor()
        await receiver.waitFor(() => receiver.to('/failing').length >= 2)
        const [first, retried] = receiver.to('/failing')
        expect(retried?.headers['webhook-id'], 'the retry is the same message').toBe(
          first?.headers['webhook-id'],
        )
        await eventually('the manual attempt in the delivery', async () => {
          await detail.getByRole('button', { name: 'Refresh' }).click()
          const text = (await detail.textContent()) ?? ''
          return text.includes('Attempt 2') && text.includes('retried by hand') && text.includes('Delivered')
        })
        await detail.getByRole('button', { name: 'Close' }).last().click()

        await nav('Audit log', 'Audit log')
        await page.getByLabel('Action').selectOption({ label: 'Delivery retried' })
        await page.getByRole('button', { name: 'Filter' }).click()
        // The unfiltered log already holds this entry among others, so wait for the filtered answer:
        // one retry so far, hence one row.
        await eventually('the filtered audit log', async () => (await page.locator('tbody tr').count()) === 1)
        const entry = page.locator('tbody tr').filter({ hasText: deliveryId })
        expect(await entry.textContent()).toContain('Delivery retried')
        expect(await entry.textContent(), 'by whom: the signed-in owner').toContain(OWNER_EMAIL)
        await fixture.screenshot(page, 'page-audit-log')

        // Down again: a second test event fails; once the receiver is back, replay what failed since yesterday.
        receiver.respondAt('/failing', { status: 503 })
        await nav('Webhooks', 'Webhooks')
        await item(url).getByRole('button', { name: 'Send test event' }).click()
        await receiver.waitFor(() => receiver.to('/failing').length >= 3)
        receiver.respondAt('/failing', { status: 204 })
        await nav('Deliveries', 'Webhook deliveries')
        await page.getByLabel('Status').selectOption({ label: 'Failed, gave up' })
        await eventually('the second failure in the log', async () => {
          await page.getByRole('button', { name: 'Refresh' }).click()
          return (await page.locator('tbody tr').filter({ hasText: url }).count()) === 1
        })
        await page.getByLabel('Endpoint to replay').selectOption({ label: url })
        await page.getByRole('button', { name: 'Replay failed deliveries' }).click()
        await dialog('Replay failed deliveries?').getByRole('button', { name: 'Replay' }).click()
        await page
          .getByRole('status')
          .filter({ hasText: '1 failed delivery will be sent again now.' })
          .waitFor()
        await receiver.waitFor(() => receiver.to('/failing').length >= 4)
        expect(receiver.to('/failing')[3]?.headers['webhook-id']).toBe(
          receiver.to('/failing')[2]?.headers['webhook-id'],
        )

        // The dashboard now has deliveries to count.
        await nav('Dashboard', 'Dashboard')
        await eventually('the delivery success rate on the dashboard', async () => {
          await page.reload()
          return (await page.locator('.tile-number').nth(1).textContent({ timeout: 5000 }))?.endsWith('%')
        })
        await fixture.screenshot(page, 'dashboard-with-deliveries')
      },
      LONG,
    )

    it(
      'imports an employee CSV and reports on each line',
      async () => {
        await open('/employees', 'Employees')
        await item('E003').waitFor()
        const csv = [
          'employeeCode,name,email,department,location,status',
          'E100,Asha Verma,asha@acme.test,Assembly,Pune,ACTIVE',
          'E101,Ravi Kumar,,Paint,Pune,',
          'E102,Bad Email,not-an-email,Paint,Pune,ACTIVE',
          'E001,Employee E001,e001@example.test,Assembly,Pune,ACTIVE',
          '',
        ].join('\n')
        await page
          .getByLabel('CSV file')
          .setInputFiles({ name: 'staff.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) })
        await page.getByRole('button', { name: 'Import', exact: true }).click()
        const summary = page.getByRole('alert').filter({ hasText: 'Import finished' })
        await summary.waitFor()
        expect(await summary.textContent()).toContain('2 added, 0 updated, 1 unchanged, 1 not imported')

        const report = page.locator('table').filter({ has: page.getByText('Import report, line by line') })
        // Failures first: only the line that was not imported.
        expect(await report.locator('tbody tr').count()).toBe(1)
        const bad = report.locator('tbody tr').first()
        expect(await bad.textContent()).toMatch(/^4E102Not imported.*email/)
        await page.getByLabel('Show only lines that were not imported').uncheck()
        expect(await report.locator('tbody tr').count()).toBe(4)
        await fixture.screenshot(page, 'employee-import')

        await page.getByLabel('Search', { exact: true }).fill('Asha')
        await page.getByRole('button', { name: 'Search', exact: true }).click()
        await eventually('the search to narrow the list', async () => {
          const rows = page.locator('table').first().locator('tbody tr')
          return (await rows.count()) === 1 && (await rows.first().textContent())?.includes('E100')
        })
        const imported = await api('/api/public/v1/employees/E101', bearer(seedKey))
        expect(await imported.json()).toMatchObject({
          employeeCode: 'E101',
          name: 'Ravi Kumar',
          status: 'ACTIVE',
        })
        await fixture.screenshot(page, 'page-employees')
      },
      LONG,
    )

    it(
      'invites a viewer, who can see every page but no control that changes anything; then removes them',
      async () => {
        await open('/users', 'Users')
        await page.getByRole('button', { name: 'Invite user' }).click()
        const form = dialog('Invite a user')
        await form.getByLabel('Email').fill(VIEWER_EMAIL)
        await form.getByLabel('Role').selectOption('viewer')
        await form.getByRole('button', { name: 'Invite' }).click()
        const invited = dialog('User invited')
        const temporary = await invited.getByLabel('One-time password').inputValue()
        expect(temporary.length).toBeGreaterThanOrEqual(12)
        await invited.getByRole('button', { name: 'Done' }).click()
        expect(await item(VIEWER_EMAIL).textContent()).toContain('has not chosen a password yet')
        await fixture.screenshot(page, 'page-users')

        const viewer = await fixture.newPage()
        try {
          const v = viewer.page
          await v.goto('/console/')
          await signIn(v, VIEWER_EMAIL, temporary)
          await choosePassword(v, temporary, VIEWER_PASSWORD)
          await v.getByText('Viewer (read only)').waitFor()
          for (const [link, title] of PAGES) {
            await v
              .getByRole('navigation', { name: 'Console' })
              .getByRole('link', { name: link, exact: true })
              .click()
            await v.getByRole('heading', { level: 1, name: title, exact: true }).waitFor()
            await v.locator('[aria-busy="true"]').waitFor({ state: 'detached' })
            expect(await heading(v)).toBe(title)
            expect(await v.getByRole('alert').allTextContents(), `${title}: a viewer may read it`).toEqual([])
            const writable = (await buttonNames(v)).filter((n) => !READ_ONLY_BUTTONS.some((ok) => ok.test(n)))
            expect(writable, `${title}: a viewer sees no write control`).toEqual([])
            expect(await v.locator('input[type="file"]').count(), title).toBe(0)
          }
          // Attendance: a day's detail, the corrections and the settings, read only.
          const readOnly = async (what: string) => {
            await v.locator('[aria-busy="true"]').waitFor({ state: 'detached' })
            expect(await v.getByRole('alert').allTextContents(), `${what}: a viewer may read it`).toEqual([])
            const writable = (await buttonNames(v)).filter((n) => !READ_ONLY_BUTTONS.some((ok) => ok.test(n)))
            expect(writable, `${what}: a viewer sees no write control`).toEqual([])
          }
          await v
            .getByRole('navigation', { name: 'Console' })
            .getByRole('link', { name: 'Attendance', exact: true })
            .click()
          await v.getByRole('cell').getByRole('button').first().click()
          const day = v.getByRole('dialog')
          await day.getByRole('heading', { name: 'Punches' }).waitFor()
          await readOnly('a day of attendance')
          await fixture.screenshot(v, 'viewer-attendance-day')
          await day.getByRole('button', { name: 'Close', exact: true }).last().click()
          const tabs = v.getByRole('navigation', { name: 'Attendance' })
          await tabs.getByRole('link', { name: 'Corrections', exact: true }).click()
          await v.getByText('No corrections yet').waitFor()
          await readOnly('attendance corrections')
          await tabs.getByRole('link', { name: 'Settings', exact: true }).click()
          await v.getByRole('table', { name: 'Holidays' }).getByText('Republic Day').waitFor()
          await v.getByText('An owner or admin can recompute a period.').waitFor()
          await readOnly('attendance settings')
          await fixture.screenshot(v, 'viewer-attendance-settings')
          // A delivery's details: no retry.
          await v
            .getByRole('navigation', { name: 'Console' })
            .getByRole('link', { name: 'Deliveries' })
            .click()
          await v
            .getByRole('button', { name: /^Details of delivery/ })
            .first()
            .click()
          await v.getByRole('dialog', { name: 'Delivery' }).getByText('Attempt 1').waitFor()
          expect(await v.getByRole('button', { name: 'Retry now' }).count()).toBe(0)
          await fixture.screenshot(v, 'viewer-delivery-detail')
        } finally {
          await viewer.context.close()
        }

        await page.reload()
        await item(VIEWER_EMAIL)
          .getByRole('button', { name: `Remove ${VIEWER_EMAIL}` })
          .click()
        await dialog('Remove this user?').getByRole('button', { name: 'Remove user' }).click()
        await item(VIEWER_EMAIL).waitFor({ state: 'detached' })
      },
      LONG,
    )

    it(
      'is operable by keyboard: a dialog keeps the focus inside, closes with Escape and gives the focus back',
      async () => {
        await open('/keys', 'API keys')
        const opener = page.getByRole('button', { name: 'Create API key' })
        await opener.focus()
        await page.keyboard.press('Enter')
        const form = dialog('Create an API key')
        await form.waitFor()
        expect(await form.getByLabel('Name').evaluate((el) => el === document.activeElement)).toBe(true)
        for (let i = 0; i < 12; i++) {
          await page.keyboard.press(i % 3 === 2 ? 'Shift+Tab' : 'Tab')
          const inside = await page.evaluate(() =>
            document.querySelector('dialog[open]')?.contains(document.activeElement),
          )
          expect(inside, `focus inside the dialog after ${i + 1} presses`).toBe(true)
        }
        await page.keyboard.press('Escape')
        await form.waitFor({ state: 'detached' })
        expect(await opener.evaluate((el) => el === document.activeElement)).toBe(true)
      },
      LONG,
    )

    it(
      'signs out, and the session is over on the server too',
      async () => {
        await open('/', 'Dashboard')
        const cookie = (await context.cookies()).find((c) => c.name === 'hajri_session')
        expect(cookie).toBeDefined()
        await page.getByRole('button', { name: 'Sign out' }).click()
        await page.getByRole('heading', { name: 'Sign in to Hajri' }).waitFor()
        expect(await page.getByRole('status').textContent()).toContain('You have signed out.')
        const after = await api('/api/console/v1/session', {
          headers: { cookie: `hajri_session=${cookie?.value}` },
        })
        expect(after.status).toBe(401)
      },
      LONG,
    )

    it('met no uncaught error, Content-Security-Policy refusal or server error in any page', () => {
      expect(fixture.pageProblems).toEqual([])
    })
  },
)
