import type { Executor } from '../../db/executor.js'
import type { PunchCorrectionsTable } from '../../db/schema.js'

export type CorrectionRow = PunchCorrectionsTable

/** Corrections beside the raw punch log, which is never edited: a manual punch's reason, or a void. */
export class CorrectionStore {
  constructor(private readonly db: Executor) {}

  /** Records a correction; false when the punch already has one of this kind (a punch is voided once). */
  async insert(row: CorrectionRow): Promise<boolean> {
    const result = await this.db
      .insertInto('punch_corrections')
      .values(row)
      .onConflict((oc) => oc.columns(['tenant_id', 'punch_id', 'kind']).doNothing())
      .executeTakeFirst()
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0
  }

  /** Of these punches, those voided. */
  async voided(tenantId: string, punchIds: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>()
    for (let i = 0; i < punchIds.length; i += 500) {
      const rows = await this.db
        .selectFrom('punch_corrections')
        .select('punch_id')
        .where('tenant_id', '=', tenantId)
        .where('kind', '=', 'void')
        .where('punch_id', 'in', punchIds.slice(i, i + 500))
        .execute()
      for (const r of rows) out.add(r.punch_id)
    }
    return out
  }

  /** Newest first, after a position from the previous page. */
  list(
    tenantId: string,
    filter: { after?: { createdAt: number; punchId: string; kind: string }; limit: number },
  ): Promise<CorrectionRow[]> {
    let q = this.db.selectFrom('punch_corrections').selectAll().where('tenant_id', '=', tenantId)
    const after = filter.after
    if (after)
      q = q.where((eb) =>
        eb(
          eb.refTuple('created_at', 'punch_id', 'kind'),
          '<',
          eb.tuple(after.createdAt, after.punchId, after.kind),
        ),
      )
    return q
      .orderBy('created_at', 'desc')
      .orderBy('punch_id', 'desc')
      .orderBy('kind', 'desc')
      .limit(filter.limit)
      .execute()
  }
}
