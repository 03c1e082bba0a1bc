/**
 * The console's Attendance page in a real Chromium, against a real hajri-cloud, as an owner's visit:
 * the month grid of days computed from punches sent through the public API, a day's detail, a missing
 * punch added and a duplicate voided (each with its reason), the corrections made, a shift and a holiday
 * added in the settings and a recompute of the month followed to its end, and the month's payroll CSV.
 * The cloud's clock is set to 25 November 2026 (IST) and its attendance worker runs when the test says
 * (`attendanceRounds()`), as it would in the background. Each step is saved as a screenshot in
 * test-results/console/.
 */
import { readFile } from 'node:fs/promises'
import type { Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseTimestamp } from '../../../../shared/time.js'
import { employee } from '../../../support/cloud-harness.js'
import { chromiumAvailability } from './chromium.js'
import { ensureConsoleBuilt } from './console-build.js'
import { ConsoleFixture, eventually } from './console-kit.js'

const chromium = await chromiumAvailability()

const OWNER_EMAIL = 'owner@pune-works.test'
const OWNER_PASSWORD = 'an owner chose this passphrase'
const LONG = 120_000
const MINUTE_US = 60_000_000
const PUBLIC_API = '/api/public/v1/attendance'
/** Wednesday 25 November 2026, noon in Pune (µs): the days up to Tuesday are over, and final. */
const NOON_25_NOV = parseTimestamp('2026-11-25T12:00:00+05:30') as number

describe.skipIf(chromium.skipReason !== undefined)(
  `the console's attendance page in Chromium${chromium.skipReason ? ` (skipped: ${chromium.skipReason})` : ''}`,
  () => {
    const fixture = new ConsoleFixture()
    const cloud = fixture.cloud
    let page: Page
    let oneTimePassword: string
    let apiKey: string
    /** The punch added by hand, and the one voided, as the days show them. */
    let addedPunch: string | undefined
    let voidedPunch: string | undefined

    const publicApi = async (method: 'GET' | 'POST', url: string, payload?: object) => {
      const res = await cloud.app.inject({
        method,
        url: `${PUBLIC_API}${url}`,
        headers: { authorization: `Bearer ${apiKey}` },
        ...(payload ? { payload } : {}),
      })
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300)
      return res.json()
    }
    const punch = (employeeCode: string, punchType: 'IN' | 'OUT', punchedAt: string) =>
      publicApi('POST', '/punches', {
        employeeCode,
        punchType,
        punchedAt,
        deviceId: 'gate-1',
        externalId: `${employeeCode}-${punchedAt}`,
      })
    /** Time passes, on the cloud's clock and the browser's (each correction gets its own time). */
    const later = async (minutes: number) => {
      cloud.fixedNow = (cloud.fixedNow ?? 0) + minutes * MINUTE_US
      await page.clock.setFixedTime(NOON_25_NOV / 1000)
    }
    const dialog = (name: string) => page.getByRole('dialog', { name, exact: true })
    const grid = () => page.getByRole('table', { name: 'Attendance, November 2026' })
    /** The grid's cell of an employee on a date of November 2026 (the row's heading is the code). */
    const cell = (employeeCode: string, date: number): Locator =>
      grid()
        .locator('tbody tr')
        .filter({ has: page.getByRole('rowheader', { name: employeeCode, exact: true }) })
        .locator('td')
        .nth(date - 1)
    /** The mark and the accessible name of a cell's day. */
    const dayMark = async (employeeCode: string, date: number) => {
      const mark = cell(employeeCode, date).getByRole('button')
      return { text: await mark.textContent(), label: await mark.getAttribute('aria-label') }
    }
    /** The facts of the open day, as "term: description". */
    const facts = async (day: Locator) => {
      const terms = await day.locator('dl.facts > dt').allInnerTexts()
      const values = await day.locator('dl.facts > dd').allInnerTexts()
      return Object.fromEntries(terms.map((t, i) => [t, values[i]?.replace(/\s+/g, ' ').trim()]))
    }
    const rowsOf = (table: Locator) =>
      table
        .locator('tbody tr')
        .evaluateAll((rows) =>
          rows.map((r) => [...r.querySelectorAll('td')].map((c) => c.textContent?.trim() ?? '')),
        )
    const openMonth = async () => {
      await page.goto('/console/attendance?month=2026-11')
      await page.getByRole('heading', { level: 1, name: 'Attendance', exact: true }).waitFor()
      await page.locator('[aria-busy="true"]').waitFor({ state: 'detached' })
    }
    const tab = (name: string) =>
      page.getByRole('navigation', { name: 'Attendance' }).getByRole('link', { name, exact: true })

    beforeAll(async () => {
      await ensureConsoleBuilt()
      await fixture.start()
      cloud.fixedNow = NOON_25_NOV
      const tenant = await cloud.services.tenants.create({
        name: 'Pune Works',
        adminEmail: OWNER_EMAIL,
        timeZone: 'Asia/Kolkata',
        backfillDays: 60,
      })
      oneTimePassword = tenant.adminPassword
      await cloud.upsertEmployees(tenant.tenantId, [
        employee('E001', { name: 'Asha Verma' }),
        employee('E002', { name: 'Ravi Kumar' }),
        employee('E003', { name: 'Meena Iyer' }),
      ])
      apiKey = await cloud.createApiKey(tenant.tenantId, [
        'attendance:read',
        'attendance:write',
        'attendance:admin',
      ])
      await publicApi('POST', '/shifts', {
        code: 'GEN',
        name: 'General',
        start: '09:00',
        end: '18:00',
        unpaidBreakMinutes: 60,
      })
      await publicApi('POST', '/assignments', { shiftCode: 'GEN', effectiveFrom: '2026-11-01' })
      // Monday: Asha in at 09:02, the reader takes her card twice, out at 18:05.
      await punch('E001', 'IN', '2026-11-23T09:02:00+05:30')
      await punch('E001', 'IN', '2026-11-23T09:03:00+05:30')
      await punch('E001', 'OUT', '2026-11-23T18:05:00+05:30')
      // Tuesday: Ravi in at 09:10, and no OUT. Meena punches nothing all month.
      await punch('E002', 'IN', '2026-11-24T09:10:00+05:30')
      await cloud.attendanceRounds()
      ;({ page } = await fixture.newPage())
      // A step that does not happen fails in seconds, not in Playwright's 30.
      page.setDefaultTimeout(10_000)
      // The browser's today is the cloud's (its timers run as ever).
      await page.clock.setFixedTime(NOON_25_NOV / 1000)
    }, LONG)

    afterAll(() => fixture.stop())

    it(
      'signs in to the month of November: each employee’s days in the right cells, with their status',
      async () => {
        await page.goto('/console/attendance')
        await page.getByRole('heading', { name: 'Sign in to Hajri' }).waitFor()
        await page.getByLabel('Email', { exact: true }).fill(OWNER_EMAIL)
        await page.getByLabel('Password', { exact: true }).fill(oneTimePassword)
        await page.getByRole('button', { name: 'Sign in' }).click()
        await page.getByRole('heading', { name: 'Choose your password' }).waitFor()
        await page.getByLabel('One-time password', { exact: true }).fill(oneTimePassword)
        await page.getByLabel('New password', { exact: true }).fill(OWNER_PASSWORD)
        await page.getByLabel('New password again', { exact: true }).fill(OWNER_PASSWORD)
        await page.getByRole('button', { name: 'Save new password' }).click()
        await page.getByRole('heading', { level: 1, name: 'Attendance', exact: true }).waitFor()

        // This month, in the organisation's time zone.
        expect(await page.getByLabel('Month', { exact: true }).inputValue()).toBe('2026-11')
        await page.getByRole('heading', { level: 2, name: 'November 2026' }).waitFor()
        await grid().waitFor()

        // Monday 23: Asha present; Tuesday 24: Ravi's day lacks its OUT, Meena never came.
        expect(await dayMark('E001', 23)).toEqual({
          text: 'P',
          label: 'E001, Mon, 23 Nov 2026: Present, final; Late entry',
        })
        expect(await dayMark('E002', 24)).toEqual({
          text: '!',
          label: 'E002, Tue, 24 Nov 2026: Incomplete, final; Late entry, No OUT punch',
        })
        expect(await dayMark('E003', 24)).toEqual({
          text: 'A',
          label: 'E003, Tue, 24 Nov 2026: Absent, final',
        })
        // Before the punches, no day was made (a recompute makes the month's: below).
        expect(await cell('E003', 2).textContent()).toBe('·No record')
        // The days made so far: those around the punches, and the calendar's yesterday and today (open).
        expect(
          await grid()
            .locator('tbody button')
            .evaluateAll((marks) => marks.map((m) => m.ariaLabel)),
        ).toEqual([
          'E001, Sun, 22 Nov 2026: Off, final',
          'E001, Mon, 23 Nov 2026: Present, final; Late entry',
          'E001, Tue, 24 Nov 2026: Absent, final',
          'E001, Wed, 25 Nov 2026: Absent, open',
          'E002, Mon, 23 Nov 2026: Absent, final',
          'E002, Tue, 24 Nov 2026: Incomplete, final; Late entry, No OUT punch',
          'E002, Wed, 25 Nov 2026: Absent, open',
          'E003, Tue, 24 Nov 2026: Absent, final',
          'E003, Wed, 25 Nov 2026: Absent, open',
        ])
        const e001 = grid()
          .locator('tbody tr')
          .filter({ has: page.getByRole('rowheader', { name: 'E001' }) })
        expect(await e001.locator('td.attendance-number').allTextContents()).toEqual([
          '1 / 0 / 2 / 0',
          '8:03',
          '0:00',
        ])
        await page.getByRole('heading', { level: 2, name: 'Legend' }).waitFor()
        await fixture.screenshot(page, 'attendance-month')

        // Another month, chosen in the field or by the buttons.
        await page.getByLabel('Month', { exact: true }).fill('2026-09')
        await page.getByText('No day records in September 2026').waitFor()
        await page.getByRole('button', { name: 'Next month, October 2026' }).click()
        await page.getByText('No day records in October 2026').waitFor()
        await page.getByRole('button', { name: 'Next month, November 2026' }).click()
        await grid().waitFor()
        await page.getByRole('button', { name: 'Previous month, October 2026' }).waitFor()
        // The address keeps the month, so a link or a reload shows it again.
        expect(new URL(page.url()).searchParams.get('month')).toBe('2026-11')

        // One employee's month, and their CSV.
        await page.getByLabel('Employee code', { exact: true }).fill('E002')
        await page.getByRole('button', { name: 'Show', exact: true }).click()
        await eventually(
          'only E002 in the grid',
          async () => (await grid().locator('tbody tr').count()) === 1,
        )
        expect(await grid().getByRole('rowheader').allTextContents()).toEqual(['E002'])
        const own = page.getByRole('link', { name: 'Download CSV for November 2026 (E002)' })
        expect(await own.getAttribute('href')).toBe(
          '/api/console/v1/attendance/days.csv?from=2026-11-01&to=2026-11-30&employeeCode=E002',
        )
        await page.getByLabel('Employee code', { exact: true }).fill('E404')
        await page.getByRole('button', { name: 'Show', exact: true }).click()
        await page.getByText('No day records for E404 in November 2026').waitFor()
        await page.getByRole('button', { name: 'Clear filters' }).click()
        await grid().locator('tbody tr').nth(2).waitFor()
      },
      LONG,
    )

    it(
      'opens a day: its figures, its punches and how each counted, and why',
      async () => {
        await openMonth()
        await cell('E001', 23).getByRole('button').click()
        const day = dialog('E001, Mon, 23 Nov 2026')
        await day.locator('dl.facts').waitFor()
        expect(await facts(day)).toMatchObject({
          Status: expect.stringMatching(/^Present final/),
          Day: 'Working day, shift GEN, 09:00 to 18:00',
          'First IN': '09:02',
          'Last OUT': '18:05',
          Worked: '8:03',
          Break: '1:00',
          Late: '0:02',
          'Early exit': '0:00',
          Overtime: '0:00',
          Flags: 'Late entry',
          Revision: expect.stringMatching(/^1, changed /),
        })
        const punches = day.getByRole('table', { name: 'Punches of the day, in time order' })
        expect((await rowsOf(punches)).map((r) => r.slice(0, 3))).toEqual([
          ['09:02', 'IN', 'Counted as IN'],
          ['09:03', 'IN', 'Duplicate, not counted'],
          ['18:05', 'OUT', 'Counted as OUT'],
        ])
        const pairs = day.getByRole('table', { name: 'IN and OUT pairs' })
        expect(await rowsOf(pairs)).toEqual([['09:02', '18:05', '9:03']])
        // Why, a sentence per figure, in the server's order.
        expect(await day.locator('.attendance-explanation li').allTextContents()).toEqual([
          'Present: 483 minutes worked, at least the 420 of a full day.',
          'Worked 09:02–18:05 less a 60-minute unpaid break: 483 minutes.',
          "The shift's fixed unpaid break of 60 minutes, as the punches show no break.",
          'In at 09:02, 2 minutes after the 09:00 start, beyond the 0-minute grace: late.',
          'Out at 18:05, not before the 18:00 end.',
          '483 minutes worked against the daily limit of 540: 0 minutes of overtime.',
          'First IN 09:02 to last OUT 18:05: 543 minutes, within the 630-minute limit.',
        ])
        await fixture.screenshot(page, 'attendance-day')
        await day.getByRole('button', { name: 'Close', exact: true }).last().click()
        await day.waitFor({ state: 'detached' })
      },
      LONG,
    )

    it(
      'adds the missing OUT with a reason: once computed again the day is present, revision 2',
      async () => {
        await openMonth()
        await cell('E002', 24).getByRole('button').click()
        const day = dialog('E002, Tue, 24 Nov 2026')
        await day.locator('dl.facts').waitFor()
        expect(await facts(day)).toMatchObject({
          Status: expect.stringMatching(/^Incomplete final/),
          'First IN': '09:10',
          'Last OUT': '—',
          Flags: 'Late entry No OUT punch',
          Revision: expect.stringMatching(/^1, /),
        })
        const why = await day.locator('.attendance-explanation li').allTextContents()
        expect(why[0]).toBe('Incomplete: a punch is missing, so the day is not judged until it is corrected.')
        expect(why).toContain('No complete IN–OUT pair: 0 minutes worked; the IN at 09:10 has no OUT.')

        await later(5)
        await day.getByRole('button', { name: 'Add punch' }).click()
        const form = dialog('Add a punch for E002')
        await form.getByLabel('Punch', { exact: true }).selectOption('OUT')
        expect(await form.getByLabel('Date', { exact: true }).inputValue()).toBe('2026-11-24')
        await form.getByLabel('Time', { exact: true }).fill('18:00')
        await form
          .getByLabel('Reason', { exact: true })
          .fill('Forgot to punch out; confirmed by the supervisor')
        await fixture.screenshot(page, 'attendance-add-punch')
        await form.getByRole('button', { name: 'Add punch' }).click()
        const back = dialog('E002, Tue, 24 Nov 2026')
        await back.getByText('Punch added at 18:00.').waitFor()

        // The worker computes the day again; the user refreshes.
        await cloud.attendanceRounds()
        await page.reload()
        await cell('E002', 24)
          .getByRole('button', { name: /: Present, final; Late entry$/ })
          .waitFor()
        await cell('E002', 24).getByRole('button').click()
        const recomputed = dialog('E002, Tue, 24 Nov 2026')
        await recomputed.locator('dl.facts').waitFor()
        expect(await facts(recomputed)).toMatchObject({
          Status: expect.stringMatching(/^Present final/),
          'First IN': '09:10',
          'Last OUT': '18:00',
          Worked: '7:50',
          Late: '0:10',
          Revision: expect.stringMatching(/^2, /),
        })
        const punches = recomputed.getByRole('table', { name: 'Punches of the day, in time order' })
        const rows = await rowsOf(punches)
        expect(rows.map((r) => r.slice(0, 3))).toEqual([
          ['09:10', 'IN', 'Counted as IN'],
          ['18:00', 'OUT', 'Counted as OUT'],
        ])
        addedPunch = rows[1]?.[3]
        expect(addedPunch).toMatch(/^pun_\w+$/)
        await fixture.screenshot(page, 'attendance-day-corrected')
        await recomputed.getByRole('button', { name: 'Close', exact: true }).last().click()
      },
      LONG,
    )

    it(
      'voids the duplicate punch with a reason: it leaves the day',
      async () => {
        await openMonth()
        await later(5)
        await cell('E001', 23).getByRole('button').click()
        const day = dialog('E001, Mon, 23 Nov 2026')
        // The dialog opens before the day is fetched: read its punches once all three are shown.
        const dayPunches = day.getByRole('table', { name: 'Punches of the day, in time order' })
        await eventually(
          'the day’s three punches',
          async () => (await dayPunches.locator('tbody tr').count()) === 3,
        )
        const before = await rowsOf(dayPunches)
        voidedPunch = before.find((r) => r[0] === '09:03')?.[3]
        expect(voidedPunch).toMatch(/^pun_\w+$/)
        await day.getByRole('button', { name: 'Void the IN punch at 09:03' }).click()
        const confirm = dialog('Void this punch?')
        expect(await confirm.textContent()).toContain('The IN punch of E001 at 09:03 will no longer count')
        await confirm.getByLabel('Reason', { exact: true }).fill('Card read twice at the gate')
        await confirm.getByRole('button', { name: 'Void punch' }).click()
        await dialog('E001, Mon, 23 Nov 2026').getByText('The IN punch at 09:03 is void.').waitFor()

        await cloud.attendanceRounds()
        const back = dialog('E001, Mon, 23 Nov 2026')
        await back.getByRole('button', { name: 'Refresh' }).click()
        const punches = back.getByRole('table', { name: 'Punches of the day, in time order' })
        await eventually(
          'the voided punch to leave the day',
          async () => (await punches.locator('tbody tr').count()) === 2,
        )
        expect((await rowsOf(punches)).map((r) => r.slice(0, 2))).toEqual([
          ['09:02', 'IN'],
          ['18:05', 'OUT'],
        ])
        expect(await facts(back)).toMatchObject({
          Status: expect.stringMatching(/^Present final/),
          Worked: '8:03',
          Revision: expect.stringMatching(/^2, /),
        })
        await back.getByRole('button', { name: 'Close', exact: true }).last().click()
      },
      LONG,
    )

    it(
      'lists both corrections, newest first, with who made them and why',
      async () => {
        await openMonth()
        await tab('Corrections').click()
        expect(await tab('Corrections').getAttribute('aria-current')).toBe('page')
        const table = page.getByRole('table', { name: 'Corrections, newest first' })
        await table.waitFor()
        await eventually('both corrections, with the owner’s email in place of the user id', async () => {
          const shown = await rowsOf(table)
          return shown.length === 2 && shown.every((r) => r.includes(OWNER_EMAIL))
        })
        const rows = await rowsOf(table)
        expect(rows.map((r) => r.slice(1))).toEqual([
          ['Punch voided', voidedPunch, 'Card read twice at the gate', OWNER_EMAIL],
          ['Punch added', addedPunch, 'Forgot to punch out; confirmed by the supervisor', OWNER_EMAIL],
        ])
        await fixture.screenshot(page, 'attendance-corrections')
      },
      LONG,
    )

    it(
      'adds a shift and a holiday in the settings, and recomputes the month, following the job to its end',
      async () => {
        await openMonth()
        await tab('Settings').click()
        await page.getByRole('heading', { level: 2, name: 'Shifts' }).waitFor()
        const shifts = page.getByRole('table', { name: 'Shifts' })
        await shifts.getByText('GEN', { exact: true }).waitFor()

        await page.getByRole('button', { name: 'Add shift' }).click()
        const shiftForm = dialog('Add a shift')
        await shiftForm.getByLabel('Code', { exact: true }).fill('NIGHT')
        await shiftForm.getByLabel('Name (optional)').fill('Night')
        await shiftForm.getByLabel('Starts', { exact: true }).fill('22:00')
        await shiftForm.getByLabel('Ends', { exact: true }).fill('06:00')
        await shiftForm.getByLabel('Unpaid break (minutes)').fill('30')
        await fixture.screenshot(page, 'attendance-shift-add')
        await shiftForm.getByRole('button', { name: 'Add shift' }).click()
        await page.getByRole('status').filter({ hasText: 'Shift NIGHT was added.' }).waitFor()
        await shifts.getByRole('row', { name: /^NIGHT / }).waitFor()
        expect((await rowsOf(shifts)).map((r) => r.slice(0, 4))).toEqual([
          ['GEN', 'General', '09:00–18:00', '1:00'],
          ['NIGHT', 'Night', '22:00–06:00 (next day)', '0:30'],
        ])

        // The organisation's policy: a full day is now 8:10 of work.
        await page.getByRole('button', { name: 'Add policy' }).click()
        const policyForm = dialog('Add a policy')
        await policyForm.getByLabel('Full day (minutes)').fill('490')
        await policyForm.getByRole('button', { name: 'Add policy' }).click()
        await page
          .getByRole('status')
          .filter({ hasText: 'The policy of the organisation was added.' })
          .waitFor()
        const policies = page.getByRole('table', { name: 'Attendance policies' })
        await policies.getByRole('row', { name: /Organisation default/ }).waitFor()
        expect((await rowsOf(policies))[0]?.slice(0, 2)).toEqual([
          'Organisation default',
          'Full day490 min (8:10)',
        ])

        await page.getByRole('button', { name: 'Add holiday' }).click()
        const holidayForm = dialog('Add a holiday')
        await holidayForm.getByLabel('Date', { exact: true }).fill('2026-11-24')
        await holidayForm.getByLabel('Name', { exact: true }).fill('Guru Nanak Jayanti')
        await holidayForm.getByRole('button', { name: 'Add holiday' }).click()
        await page.getByRole('status').filter({ hasText: 'Guru Nanak Jayanti' }).waitFor()
        const holidays = page.getByRole('table', { name: 'Holidays' })
        await holidays.getByRole('row', { name: /Guru Nanak Jayanti/ }).waitFor()
        expect(await rowsOf(holidays)).toEqual([
          ['Tue, 24 Nov 2026', 'Guru Nanak Jayanti', 'Everyone', expect.any(String)],
        ])

        // The recompute covers the month in the address; the worker does it while the page asks.
        const recompute = page.getByRole('form', { name: 'Recompute a period' })
        expect(await recompute.getByLabel('From', { exact: true }).inputValue()).toBe('2026-11-01')
        expect(await recompute.getByLabel('Until', { exact: true }).inputValue()).toBe('2026-11-25')
        await recompute.getByRole('button', { name: 'Recompute' }).click()
        const progress = page.locator('.attendance-job')
        await progress.getByText(/^(Queued|Running)$/).waitFor()
        await fixture.screenshot(page, 'attendance-recompute-started')
        await eventually(
          'the recompute to be done',
          async () => {
            await cloud.attendanceRounds()
            return (await progress.textContent())?.includes('Done')
          },
          30_000,
        )
        const text = (await progress.textContent())?.replace(/\s+/g, ' ') ?? ''
        expect(text).toMatch(
          /Done Recompute of 2026-11-01 to 2026-11-25: 3 of 3 employees, \d+ days changed\./,
        )
        expect(
          await progress.getByRole('progressbar', { name: 'Employees recomputed' }).getAttribute('value'),
        ).toBe('3')
        await fixture.screenshot(page, 'attendance-recompute-done')

        // The month now has every day of everyone up to today; the holiday is off, not absent.
        await tab('Month').click()
        await grid().waitFor()
        expect(await cell('E003', 26).textContent()).toBe('·No record')
        expect(await dayMark('E003', 2)).toEqual({ text: 'A', label: 'E003, Mon, 2 Nov 2026: Absent, final' })
        expect(await dayMark('E003', 1)).toMatchObject({
          text: '–',
          label: expect.stringMatching(/: Off, final$/),
        })
        expect(await dayMark('E003', 24)).toMatchObject({
          text: '–',
          label: 'E003, Tue, 24 Nov 2026: Off, final',
        })
        // Asha's 8:03 is no longer a full day; Ravi worked the holiday (no shift that day, so no break).
        expect(await dayMark('E001', 23)).toEqual({
          text: 'H',
          label: 'E001, Mon, 23 Nov 2026: Half day, final; Late entry',
        })
        expect(await dayMark('E002', 24)).toEqual({
          text: 'P',
          label: 'E002, Tue, 24 Nov 2026: Present, final; Worked on an off day',
        })
        await fixture.screenshot(page, 'attendance-month-recomputed')
      },
      LONG,
    )

    it(
      'downloads the month as the payroll CSV: a header, then a line per day',
      async () => {
        await openMonth()
        const link = page.getByRole('link', { name: 'Download CSV for November 2026' })
        const [download] = await Promise.all([page.waitForEvent('download'), link.click()])
        expect(download.suggestedFilename()).toBe('attendance-2026-11-01-2026-11-30.csv')
        const csv = await readFile(await download.path(), 'utf8')
        const lines = csv.split('\r\n')
        expect(lines.pop()).toBe('')
        expect(lines[0]).toBe(
          'employeeCode,workDate,shiftCode,dayType,status,state,firstIn,lastOut,workedMinutes,breakMinutes,lateMinutes,earlyExitMinutes,overtimeMinutes,spreadOverMinutes,flags,revision',
        )
        const byDay = new Map(lines.slice(1).map((l) => [l.split(',').slice(0, 2).join(' '), l]))
        expect(byDay.get('E001 2026-11-23')).toBe(
          'E001,2026-11-23,GEN,WORKING,HALF_DAY,FINAL,2026-11-23T09:02:00+05:30,2026-11-23T18:05:00+05:30,483,60,2,0,0,543,LATE_ENTRY,3',
        )
        expect(byDay.get('E003 2026-11-02')).toMatch(/^E003,2026-11-02,GEN,WORKING,ABSENT,FINAL,/)
        expect(byDay.get('E003 2026-11-24')).toMatch(/^E003,2026-11-24,GEN,HOLIDAY,OFF,FINAL,/)
        // As many lines as marks in the grid.
        const marks = await grid().locator('tbody button.attendance-cell').count()
        expect(lines.length - 1).toBe(marks)
      },
      LONG,
    )

    it('met no uncaught error, Content-Security-Policy refusal or server error', () => {
      expect(fixture.pageProblems).toEqual([])
    })
  },
)
