/** The attendance routes of the console API (the public API's, under /api/console/v1). */
export const ATTENDANCE = '/attendance'

/** The most days one page holds (the API's limit): a month of about six employees. */
export const DAYS_PAGE_LIMIT = 200

/** Where the console API is served (ApiClient's base): the CSV export is a plain link, not a fetch. */
const CONSOLE_API = '/api/console/v1'

/** The day record of one employee on one date. */
export const dayPath = (employeeCode: string, workDate: string) =>
  `${ATTENDANCE}/days/${encodeURIComponent(employeeCode)}/${workDate}`

/** The payroll export of a period (the session cookie goes with the download), one employee's or everyone's. */
export function daysCsvHref(from: string, to: string, employeeCode = ''): string {
  const query = new URLSearchParams({ from, to })
  if (employeeCode !== '') query.set('employeeCode', employeeCode)
  return `${CONSOLE_API}${ATTENDANCE}/days.csv?${query}`
}
