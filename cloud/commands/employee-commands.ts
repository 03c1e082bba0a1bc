import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { parseEmployeeCsv } from '../features/employees/employee-csv.js'
import type { Command } from './command-context.js'

/** `employees import`: good lines are imported, bad ones reported by line number. */
const importCsv: Command = async (context) => {
  const file = context.operand('CSV file to import')
  const tenantId = context.required('tenant')
  const parsed = parseEmployeeCsv(await readFile(resolve(context.io.cwd, file), 'utf8'))
  const summary = await context.withServices((services) =>
    services.employees.upsert(
      tenantId,
      parsed.rows.map((r) => r.input),
    ),
  )
  const lines = [
    `created ${summary.created}, updated ${summary.updated}, unchanged ${summary.unchanged}, rejected ${parsed.rejected.length}`,
    ...parsed.rejected.map((r) => `  line ${r.line}: ${r.reason}`),
  ]
  context.print({ ...summary, rejected: parsed.rejected }, lines.join('\n'))
}

export const employeeCommands: Record<string, Command> = { 'employees import': importCsv }
