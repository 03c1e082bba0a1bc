import { useState } from 'react'
import type { Assignment, Shift } from './api-types.js'
import { ATTENDANCE } from './attendance-api.js'
import { AttendanceAssignmentDialog } from './attendance-assignment-dialog.js'
import { AttendanceSection } from './attendance-section.js'
import { formatWorkDate, todayIn } from './attendance-time.js'
import { useWholeList } from './attendance-whole-list.js'
import { ConfirmDialog } from './confirm-dialog.js'
import { useConsole } from './console-context.js'
import type { Column } from './data-table.js'
import { EmptyState } from './empty-state.js'
import { LastNotice } from './last-notice.js'
import { PagedTable } from './paged-table.js'
import { useListNotice } from './use-list-notice.js'

type Open = { kind: 'create' } | { kind: 'delete'; assignment: Assignment }

/** "Employee E001", "Group Packing", "Everyone". */
export function assignedTo(a: Pick<Assignment, 'employeeCode' | 'group'>): string {
  if (a.employeeCode) return `Employee ${a.employeeCode}`
  if (a.group) return `Group ${a.group}`
  return 'Everyone'
}

const COLUMNS: Column<Assignment>[] = [
  { heading: 'For', cell: assignedTo },
  { heading: 'Shift', cell: (a) => <code>{a.shiftCode}</code> },
  { heading: 'From', cell: (a) => formatWorkDate(a.effectiveFrom) },
  {
    heading: 'Until',
    cell: (a) => (a.effectiveTo ? formatWorkDate(a.effectiveTo) : <span className="muted">For good</span>),
  },
]

/** Which shift applies to whom, and when. */
export function AttendanceAssignments({ shifts }: { shifts: Shift[] }) {
  const { api, tenant } = useConsole()
  const list = useWholeList<Assignment>(`${ATTENDANCE}/assignments`)
  const { notice, changed } = useListNotice(list)
  const [open, setOpen] = useState<Open>()
  const close = () => setOpen(undefined)

  return (
    <AttendanceSection
      title="Shift assignments"
      addLabel="Assign shift"
      onAdd={() => setOpen({ kind: 'create' })}
      lead="An employee's own assignment wins over their group's, which wins over everyone's. Days with no shift assigned are calendar days."
    >
      <LastNotice notice={notice} />
      <PagedTable
        list={list}
        empty={
          <EmptyState title="No shift assigned yet" forViewers="An owner or admin can assign one.">
            Add a shift, then assign it to everyone, a group or an employee.
          </EmptyState>
        }
        caption="Shift assignments"
        columns={COLUMNS}
        rowKey={(a) => a.id}
        actions={(a) => (
          <button
            type="button"
            className="button-danger"
            onClick={() => setOpen({ kind: 'delete', assignment: a })}
            aria-label={`Delete the assignment of ${a.shiftCode} to ${assignedTo(a)}`}
          >
            Delete
          </button>
        )}
      />

      {open?.kind === 'create' ? (
        <AttendanceAssignmentDialog
          shifts={shifts}
          today={todayIn(tenant.timeZone)}
          onClose={close}
          onSubmit={async (input) => {
            const created = await api.post<Assignment>(`${ATTENDANCE}/assignments`, input)
            changed(`Shift ${created.shiftCode} is assigned to ${assignedTo(created)}.`)
            close()
          }}
        />
      ) : null}
      {open?.kind === 'delete' ? (
        <ConfirmDialog
          title="Delete this assignment?"
          confirmLabel="Delete assignment"
          danger
          onClose={close}
          onConfirm={async () => {
            await api.delete(`${ATTENDANCE}/assignments/${encodeURIComponent(open.assignment.id)}`)
            changed(
              `The assignment of ${open.assignment.shiftCode} to ${assignedTo(open.assignment)} was deleted.`,
            )
          }}
        >
          <p>
            <strong>{assignedTo(open.assignment)}</strong> will no longer have shift{' '}
            <strong>{open.assignment.shiftCode}</strong> from {formatWorkDate(open.assignment.effectiveFrom)}
            {open.assignment.effectiveTo ? ` to ${formatWorkDate(open.assignment.effectiveTo)}` : ''}, in days
            computed from now on.
          </p>
        </ConfirmDialog>
      ) : null}
    </AttendanceSection>
  )
}
