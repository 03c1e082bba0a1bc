import type { Services } from '../services.js'
import { type CommandEntry, command } from './command-context.js'

export interface TenantListCommandSpec<T> {
  /** The words that name it: `api-key list`. */
  name: string
  list(services: Services, tenantId: string): Promise<readonly T[]>
  /** What a person reads when there is none: `no API keys`. */
  none: string
  /** One line for a person. */
  describe(item: T): string
}

/** A command of the form `<name> --tenant ID` that prints all of a tenant's things of a kind, one a line. */
export function tenantListCommand<T>(spec: TenantListCommandSpec<T>): CommandEntry<'tenant'> {
  return command({
    name: spec.name,
    usage: '--tenant ID',
    options: ['tenant'],
    run: async (context) => {
      const tenantId = context.required('tenant')
      const items = await context.withServices((services) => spec.list(services, tenantId))
      context.print(
        items,
        items.length === 0 ? spec.none : items.map((item) => spec.describe(item)).join('\n'),
      )
    },
  })
}
