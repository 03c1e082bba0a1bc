/**
 * One cell of a CSV file the project writes, safe to open in a spreadsheet. Every CSV writer goes
 * through here (today: `hajri-agent dead-letters export --format csv`), so the two rules below are
 * written once:
 *
 * 1. CSV ("formula") injection: a cell that begins with `=`, `+`, `-` or `@` is read by
 *    Excel, LibreOffice and Google Sheets as a formula (`=HYPERLINK(...)`, `=cmd|...`), and a
 *    leading TAB or CR lets one hide behind whitespace. Such a cell gets a single quote in front,
 *    which the spreadsheet shows as text. The cells come from devices and the network (raw frames,
 *    employee codes, error details), so none is trusted.
 * 2. RFC 4180 §2: a cell holding a comma, a double quote, CR or LF is quoted, its quotes doubled.
 *
 * The quote changes the value ("-5" reads back as "'-5"): the price of a file that is safe to open.
 */

/** The first characters that make a spreadsheet read a cell as a formula, or hide one. */
const FORMULA_START = /^[=+\-@\t\r]/

function csvCell(value: string | number | null | undefined): string {
  const raw = value === null || value === undefined ? '' : String(value)
  const text = FORMULA_START.test(raw) ? `'${raw}` : raw
  return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** A row: its cells, each made safe, joined by commas (no line end). */
export function csvRow(values: readonly (string | number | null | undefined)[]): string {
  return values.map(csvCell).join(',')
}
