/**
 * The shapes the console reads from the console API. Where the server's schemas live in
 * shared/, their types are used as they are (type-only: nothing of TypeBox reaches the bundle).
 */
import type { Static } from '@sinclair/typebox'
import type {
  AssignmentInput,
  AssignmentView,
  AttendanceDay,
  AttendanceDayDetail,
  AttendanceSummary,
  Correction,
  DayState,
  DayStatusName,
  HolidayInput,
  HolidayView,
  PolicyInput,
  PolicyView,
  RecomputeInput,
  RecomputeJob,
  ShiftInput,
  ShiftView,
} from '../../../shared/attendance.js'
import type { AuditAction, AuditEntry } from '../../../shared/audit.js'
import type {
  ConsoleRole,
  ConsoleSession,
  ConsoleUser,
  InvitedConsoleUser,
} from '../../../shared/console-auth.js'
import type {
  CreatedApiKeySchema,
  CreatedOAuthAppSchema,
  RotatedClientSecretSchema,
} from '../../../shared/console-credentials.js'
import type { EmployeeImportLine, EmployeeImportReport } from '../../../shared/console-employees.js'
import type { ApiKeySummary, OAuthAppSummary } from '../../../shared/credentials.js'
import type { DeliveriesPerDay, PunchesPerHour } from '../../../shared/dashboard.js'
import type { Employee, EmployeeStatus } from '../../../shared/employee.js'
import type { Scope } from '../../../shared/scopes.js'
import type {
  DeliveryStatus,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookEndpoint,
} from '../../../shared/webhooks.js'

export type {
  ApiKeySummary,
  AssignmentInput,
  AttendanceDay,
  AttendanceDayDetail,
  AttendanceSummary,
  AuditAction,
  AuditEntry,
  Correction,
  DayState,
  DayStatusName,
  DeliveryStatus,
  Employee,
  EmployeeStatus,
  HolidayInput,
  OAuthAppSummary,
  PolicyInput,
  RecomputeInput,
  RecomputeJob,
  Scope,
  ShiftInput,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookEndpoint,
}

/** Every list (docs/development/architecture.md#paging). */
export interface Page<T> {
  data: T[]
  nextCursor: string | null
}

export type Role = ConsoleRole
export type { ConsoleUser }
export type Session = ConsoleSession
export type InvitedUser = InvitedConsoleUser

export type CreatedApiKey = Static<typeof CreatedApiKeySchema>
export type CreatedOAuthApp = Static<typeof CreatedOAuthAppSchema>
export type RotatedClientSecret = Static<typeof RotatedClientSecretSchema>
export type ImportReport = EmployeeImportReport
export type ImportLine = EmployeeImportLine
export type Shift = ShiftView
export type Policy = PolicyView
/** The policy fields a policy may set (each one left out is inherited). */
export type PolicySettings = PolicyView['settings']
export type Assignment = AssignmentView
export type Holiday = HolidayView
export type DayPunch = AttendanceDay['punches'][number]
export type HourCount = PunchesPerHour['data'][number]
export type DayDeliveries = DeliveriesPerDay['data'][number]

export interface EventType {
  type: string
  description: string
}
