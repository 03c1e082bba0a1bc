import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { parseEmployeeCsv } from '../features/employees/employee-csv.js'
import { command } from './command-context.js'

/** `employees import`: good lines are imported, bad ones reported by line number. */
const importCsv = command({
  name: 'employees import',
  usage: '--tenant ID FILE.csv',
  options: ['tenant'],
  operand: { name: 'FILE.csv', what: 'CSV file to import' },
  run: async (context) => {
    const file = context.operand()
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
  },
})

export const employeeCommands = [importCsv]
