/** One punch's result in a scripted batch answer (shared/punch.ts PunchBatchResult). */
export interface ScriptedResult {
  index: number
  status: 'created' | 'duplicate' | 'rejected'
  problem?: unknown
}

/** A 200 answer of the batch endpoint as the cloud writes it: the results and their summary. */
export function batchAnswer(results: readonly ScriptedResult[]) {
  const count = (status: ScriptedResult['status']) => results.filter((r) => r.status === status).length
  return {
    summary: {
      received: results.length,
      created: count('created'),
      duplicate: count('duplicate'),
      rejected: count('rejected'),
    },
    results,
  }
}
