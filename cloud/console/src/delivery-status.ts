import type { DeliveryStatus } from './api-types.js'

/** What each delivery status means, in words. */
export const DELIVERY_STATUS_TEXT: Record<DeliveryStatus, string> = {
  pending: 'Waiting to be sent',
  failed: 'Failed, will be retried',
  succeeded: 'Delivered',
  exhausted: 'Failed, gave up',
}

export const DELIVERY_STATUSES = Object.keys(DELIVERY_STATUS_TEXT) as DeliveryStatus[]
