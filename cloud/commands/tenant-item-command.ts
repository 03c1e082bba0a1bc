import type { Actor } from '../auth/actor.js'
import type { Services } from '../services.js'
import { type CommandEntry, command } from './command-context.js'

export interface TenantItemCommandSpec<T> {
  /** The words that name it: `api-key revoke`. */
  name: string
  /** The one thing of the tenant's it acts on: its name in the usage (`KEY_ID`), and what it is. */
  operand: { name: string; what: string }
  /** What it does, as the CLI's operator (`actor`); its answer is printed as JSON with `--json`. */
  act(services: Services, tenantId: string, operand: string, actor: Actor): Promise<T>
  /** The answer as a person reads it. */
  human(result: T, operand: string): string
}

/** A command of the form `<name> --tenant ID OPERAND` that does one thing to one of a tenant's things. */
export function tenantItemCommand<T>(spec: TenantItemCommandSpec<T>): CommandEntry<'tenant'> {
  return command({
    name: spec.name,
    usage: `--tenant ID ${spec.operand.name}`,
    options: ['tenant'],
    operand: spec.operand,
    run: async (context) => {
      const tenantId = context.required('tenant')
      const operand = context.operand()
      const result = await context.withServices((services) =>
        spec.act(services, tenantId, operand, context.actor),
      )
      context.print(result, spec.human(result, operand))
    },
  })
}
