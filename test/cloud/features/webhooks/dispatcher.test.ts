import { describe, expect, it } from 'vitest'
import { planRuns } from '../../../../cloud/features/webhooks/dispatcher.js'

// The dispatcher's runs: bounded concurrency overall and per endpoint, oldest first
// (docs/decisions/0052-per-endpoint-concurrency-per-instance.md).

const due = (...endpoints: string[]) => endpoints.map((endpoint_id, i) => ({ id: `d${i}`, endpoint_id }))
const ids = (runs: { id: string }[][]) => runs.map((run) => run.map((d) => d.id))

describe('planRuns', () => {
  it("keeps each endpoint's deliveries in their order, ten to a run", () => {
    const rows = due(...Array.from({ length: 23 }, () => 'a'))
    const runs = planRuns(rows, 16, () => 1)
    expect(ids(runs)).toEqual([rows.slice(0, 10).map((d) => d.id)])
  })

  it('gives an endpoint with more free slots more runs, each in order', () => {
    const rows = due(...Array.from({ length: 23 }, () => 'a'))
    expect(ids(planRuns(rows, 16, () => 3))).toEqual([
      rows.slice(0, 10).map((d) => d.id),
      rows.slice(10, 20).map((d) => d.id),
      rows.slice(20).map((d) => d.id),
    ])
  })

  it('shares the slots between endpoints, and leaves out endpoints with none free', () => {
    const rows = due('a', 'b', 'a', 'c', 'b', 'd')
    const runs = planRuns(rows, 2, (endpoint) => (endpoint === 'b' ? 0 : 1))
    expect(ids(runs)).toEqual([['d0', 'd2'], ['d3']])
  })

  it('plans nothing without a free slot', () => {
    expect(planRuns(due('a', 'b'), 0, () => 1)).toEqual([])
  })
})
