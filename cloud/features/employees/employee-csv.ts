import { parse } from 'csv-parse/sync'
import { type EmployeeInput, EmployeeInputSchema } from '../../../shared/employee.js'
import { compileCheck } from '../../validation.js'

/** The CSV columns, in any order; the header line names them. */
export const EMPLOYEE_CSV_COLUMNS = [
  'employeeCode',
  'name',
  'email',
  'department',
  'location',
  'status',
] as const
const REQUIRED_COLUMNS = ['employeeCode', 'name'] as const

export interface CsvLine {
  line: number
  input: EmployeeInput
}

export interface CsvRejection {
  line: number
  /** The code the line gives (trimmed, at most 64 characters shown), or null when it gives none. */
  employeeCode: string | null
  /** Every problem of the line, each as `field: message`. */
  errors: string[]
  /** The errors in one sentence, as the CLI prints them. */
  reason: string
}

export interface ParsedEmployeeCsv {
  rows: CsvLine[]
  rejected: CsvRejection[]
}

export class CsvFormatError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'CsvFormatError'
  }
}

const checkEmployee = compileCheck<EmployeeInput>(EmployeeInputSchema)

/** A bad line's code as a report shows it: enough to find the line, never the whole of a runaway field. */
function shownCode(value: string | undefined): string | null {
  const trimmed = value?.trim() ?? ''
  return trimmed === '' ? null : trimmed.length > 64 ? `${trimmed.slice(0, 64)}…` : trimmed
}

function blankToNull(value: string | undefined): string | null {
  const trimmed = value?.trim() ?? ''
  return trimmed === '' ? null : trimmed
}

/**
 * Reads an employee CSV. A wrong header is fatal (nothing would import right); a bad line is
 * reported with its line number and the rest are kept, as HR exports are rarely perfect.
 */
export function parseEmployeeCsv(text: string): ParsedEmployeeCsv {
  let records: { record: string[]; info: { lines: number } }[]
  try {
    records = parse(text.replace(/^\uFEFF/, ''), {
      bom: true,
      skip_empty_lines: true,
      relax_column_count: true,
      info: true,
    }) as unknown as { record: string[]; info: { lines: number } }[]
  } catch (err) {
    throw new CsvFormatError(`not a readable CSV file: ${(err as Error).message}`)
  }
  const [header, ...lines] = records
  if (!header) throw new CsvFormatError('the file is empty; the first line must name the columns')
  const columns = header.record.map((c) => c.trim())
  const unknown = columns.filter((c) => !(EMPLOYEE_CSV_COLUMNS as readonly string[]).includes(c))
  const missing = REQUIRED_COLUMNS.filter((c) => !columns.includes(c))
  if (unknown.length > 0 || missing.length > 0) {
    const parts = []
    if (missing.length > 0) parts.push(`missing ${missing.join(', ')}`)
    if (unknown.length > 0) parts.push(`unknown ${unknown.join(', ')}`)
    throw new CsvFormatError(
      `header: ${parts.join('; ')}. Expected the columns ${EMPLOYEE_CSV_COLUMNS.join(',')} in the first line.`,
    )
  }

  const rows: CsvLine[] = []
  const rejected: CsvRejection[] = []
  const firstLineOfCode = new Map<string, number>()
  for (const { record, info } of lines) {
    const line = info.lines
    const field = (name: string) => record[columns.indexOf(name)]
    const reject = (errors: string[]) =>
      rejected.push({
        line,
        employeeCode: shownCode(field('employeeCode')),
        errors,
        reason: errors.join('; '),
      })
    if (record.length !== columns.length) {
      reject([`has ${record.length} fields, the header has ${columns.length}`])
      continue
    }
    const candidate = {
      employeeCode: field('employeeCode')?.trim() ?? '',
      name: field('name')?.trim() ?? '',
      email: blankToNull(field('email')),
      department: blankToNull(field('department')),
      location: blankToNull(field('location')),
      status: blankToNull(field('status'))?.toUpperCase() ?? 'ACTIVE',
    }
    const checked = checkEmployee(candidate)
    if (!checked.ok) {
      reject(checked.errors.map((e) => `${e.pointer.slice(2)}: ${e.message}`))
      continue
    }
    const first = firstLineOfCode.get(checked.value.employeeCode)
    if (first !== undefined) {
      reject([`employeeCode: ${checked.value.employeeCode} is also on line ${first}`])
      continue
    }
    firstLineOfCode.set(checked.value.employeeCode, line)
    rows.push({ line, input: checked.value })
  }
  return { rows, rejected }
}
