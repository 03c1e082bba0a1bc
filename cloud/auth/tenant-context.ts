/** What a request knows about its tenant once the credential is checked. */
export interface TenantContext {
  id: string
  timeZone: string
  backfillDays: number
}

export const DEFAULT_TIME_ZONE = 'Asia/Kolkata'
export const DEFAULT_BACKFILL_DAYS = 90
