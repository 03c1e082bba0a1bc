import type { Command } from './command-context.js'

const create: Command = async (context) => {
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
}

export const tenantCommands: Record<string, Command> = { 'tenant create': create }
