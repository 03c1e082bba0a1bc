import type { Shift } from './api-types.js'
import { ATTENDANCE } from './attendance-api.js'
import { AttendanceAssignments } from './attendance-assignments.js'
import { AttendanceHolidays } from './attendance-holidays.js'
import type { Month } from './attendance-month.js'
import { AttendancePolicies } from './attendance-policies.js'
import { AttendanceRecompute } from './attendance-recompute.js'
import { AttendanceShifts } from './attendance-shifts.js'
import { useWholeList } from './attendance-whole-list.js'

/** How days are computed: shifts and who works them, policies, holidays; and recomputing a period. */
export function AttendanceSettings({ month }: { month: Month }) {
  // Shifts are listed here and chosen from when assigning one.
  const shifts = useWholeList<Shift>(`${ATTENDANCE}/shifts`)
  return (
    <>
      <AttendanceShifts list={shifts} />
      <AttendanceAssignments shifts={shifts.items} />
      <AttendancePolicies />
      <AttendanceHolidays />
      <AttendanceRecompute month={month} />
    </>
  )
}
