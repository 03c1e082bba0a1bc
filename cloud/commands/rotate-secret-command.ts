import type { Actor } from '../auth/actor.js'
import type { Services } from '../services.js'
import { type CommandEntry, command, durationText } from './command-context.js'

export interface RotateSecretCommandSpec<T> {
  /** The words that name it: `oauth-app rotate-secret`. */
  name: string
  /** What holds the secret: its name in the usage (`APP_ID`), and what it is. */
  operand: { name: string; what: string }
  /** How long the secrets in use keep working when `--grace` is not given, shown in the usage. */
  defaultGraceSeconds: number
  rotate(
    services: Services,
    tenantId: string,
    operand: string,
    actor: Actor,
    graceSeconds: number | undefined,
  ): Promise<T>
  /** The answer as a person reads it: the new secret, and until when the old ones work. */
  human(result: T): string
}

/**
 * A command of the form `<name> --tenant ID OPERAND [--grace 24h]`: a new secret at once, while the ones
 * in use keep working for the grace period, so that whoever holds them can switch without a gap.
 */
export function rotateSecretCommand<T>(spec: RotateSecretCommandSpec<T>): CommandEntry<'tenant' | 'grace'> {
  return command({
    name: spec.name,
    usage: `--tenant ID ${spec.operand.name} [--grace ${durationText(spec.defaultGraceSeconds, 'h')}]`,
    options: ['tenant', 'grace'],
    operand: spec.operand,
    run: async (context) => {
      const tenantId = context.required('tenant')
      const operand = context.operand()
      const graceSeconds = context.duration('grace')
      const result = await context.withServices((services) =>
        spec.rotate(services, tenantId, operand, context.actor, graceSeconds),
      )
      context.print(result, spec.human(result))
    },
  })
}
