import { DEFAULT_BACKFILL_DAYS, DEFAULT_TIME_ZONE } from '../auth/tenant-context.js'
import { command } from './command-context.js'

const create = command({
  name: 'tenant create',
  usage: `--name NAME --admin-email EMAIL [--time-zone ${DEFAULT_TIME_ZONE}] [--backfill-days ${DEFAULT_BACKFILL_DAYS}]`,
  options: ['name', 'admin-email', 'time-zone', 'backfill-days'],
  run: async (context) => {
    const input = {
      name: context.required('name'),
      adminEmail: context.required('admin-email'),
      timeZone: context.options['time-zone'],
      backfillDays: context.wholeNumber('backfill-days'),
    }
    const result = await context.withServices((services) => services.tenants.create(input))
    context.print(
      result,
      `tenant ${result.tenantId} created\nconsole owner: ${result.adminEmail}\n` +
        `one-time password: ${result.adminPassword}\n(shown once; the console asks for a new one at the first sign-in)`,
    )
  },
})

export const tenantCommands = [create]
