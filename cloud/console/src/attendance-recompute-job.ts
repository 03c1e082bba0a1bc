import { useCallback, useEffect, useState } from 'react'
import { errorMessage } from './api-client.js'
import type { RecomputeInput, RecomputeJob } from './api-types.js'
import { ATTENDANCE } from './attendance-api.js'
import { useConsole } from './console-context.js'

/** How often a running job is asked about. */
export const JOB_POLL_MS = 2000

export const jobFinished = (job: RecomputeJob) => job.status === 'done' || job.status === 'failed'

export interface RecomputeJobState {
  job: RecomputeJob | undefined
  /** Asking about the job failed (the job itself may still run): it is no longer followed. */
  error: string | undefined
  /** Starts a recompute (the server answers 202 with the job) and follows it until it is done. */
  start: (input: RecomputeInput) => Promise<void>
  /** Asks about the job again (after asking failed), and follows it again. */
  check: () => void
}

/** A recompute job: started here, then asked about every 2 s until it is done or failed. */
export function useRecomputeJob(): RecomputeJobState {
  const { api } = useConsole()
  const [job, setJob] = useState<RecomputeJob>()
  const [error, setError] = useState<string>()

  const ask = useCallback(
    async (id: string) => {
      try {
        const next = await api.get<RecomputeJob>(`${ATTENDANCE}/jobs/${encodeURIComponent(id)}`)
        setError(undefined)
        setJob(next)
      } catch (err) {
        setError(errorMessage(err))
      }
    },
    [api],
  )

  // Each answer is a new job object, which schedules the next question; a failed one does not.
  useEffect(() => {
    if (!job || jobFinished(job)) return
    const timer = setTimeout(() => void ask(job.id), JOB_POLL_MS)
    return () => clearTimeout(timer)
  }, [ask, job])

  const start = async (input: RecomputeInput) => {
    setError(undefined)
    setJob(await api.post<RecomputeJob>(`${ATTENDANCE}/recompute`, input))
  }

  return { job, error, start, check: () => (job ? void ask(job.id) : undefined) }
}
