import type { DeadLetter } from '../../../agent/punch/spooled-punch.js'
import { DEAD_LETTER_PAGE_MAX, type DeadLetters } from '../../../agent/spool/dead-letters.js'

/** Every dead letter, oldest first, page after page (as `hajri-agent dead-letters list` reads them). */
export async function allDeadLetters(dead: Pick<DeadLetters, 'list'>): Promise<DeadLetter[]> {
  const all: DeadLetter[] = []
  let cursor: string | undefined
  do {
    const page = await dead.list({ limit: DEAD_LETTER_PAGE_MAX, cursor })
    all.push(...page.data)
    cursor = page.nextCursor ?? undefined
  } while (cursor)
  return all
}
