import { AUDIT_ACTIONS, type AuditAction } from '../../shared/audit.js'
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../../shared/pagination.js'
import { command, UsageError } from './command-context.js'

/** `audit list`: newest first; `--action`, `--target ID`, `--limit N` (default 50, at most 200). */
const list = command({
  name: 'audit list',
  usage: `--tenant ID [--action api_key.revoked] [--target ID] [--limit ${DEFAULT_PAGE_LIMIT}]`,
  options: ['tenant', 'action', 'target', 'limit'],
  run: async (context) => {
    const tenantId = context.required('tenant')
    const action = context.options.action
    if (action !== undefined && !(AUDIT_ACTIONS as readonly string[]).includes(action)) {
      throw new UsageError(`--action must be one of ${AUDIT_ACTIONS.join(', ')}`)
    }
    const limit = context.wholeNumber('limit') ?? DEFAULT_PAGE_LIMIT
    if (limit < 1 || limit > MAX_PAGE_LIMIT)
      throw new UsageError(`--limit must be from 1 to ${MAX_PAGE_LIMIT}`)
    const page = await context.withServices((services) =>
      services.audit.list(tenantId, {
        action: action as AuditAction | undefined,
        targetId: context.options.target,
        limit,
      }),
    )
    const human =
      page.data.length === 0
        ? 'no audit entries'
        : page.data
            .map(
              (e) =>
                `${e.occurredAt}  ${e.action.padEnd(24)} ${e.target.type} ${e.target.id}  by ${e.actor}${e.ip ? ` from ${e.ip}` : ''}`,
            )
            .join('\n')
    context.print(page.data, human)
  },
})

export const auditCommands = [list]
