import { useState } from 'react'
import type { Shift } from './api-types.js'
import { ATTENDANCE } from './attendance-api.js'
import { AttendanceSection } from './attendance-section.js'
import { AttendanceShiftDialog } from './attendance-shift-dialog.js'
import { formatMinutes } from './attendance-time.js'
import { ConfirmDialog } from './confirm-dialog.js'
import { useConsole } from './console-context.js'
import type { Column } from './data-table.js'
import { EmptyState } from './empty-state.js'
import { LastNotice } from './last-notice.js'
import { PagedTable } from './paged-table.js'
import { useListNotice } from './use-list-notice.js'
import type { PagedList } from './use-paged-list.js'

type Open = { kind: 'create' } | { kind: 'edit'; shift: Shift } | { kind: 'delete'; shift: Shift }

/** "22:00–06:00 (next day)". */
export const shiftHours = (s: Pick<Shift, 'start' | 'end'>) =>
  `${s.start}–${s.end}${s.end <= s.start ? ' (next day)' : ''}`

const COLUMNS: Column<Shift>[] = [
  { heading: 'Code', cell: (s) => <code>{s.code}</code> },
  { heading: 'Name', cell: (s) => s.name ?? '' },
  { heading: 'Hours', cell: shiftHours },
  { heading: 'Unpaid break', cell: (s) => formatMinutes(s.unpaidBreakMinutes) },
  {
    heading: 'Grace',
    cell: (s) => `late ${s.lateGraceMinutes} min, early exit ${s.earlyExitGraceMinutes} min`,
  },
  {
    heading: 'Punches count from',
    cell: (s) => `${s.earlyWindowMinutes} min before to ${s.lateWindowMinutes} min after`,
  },
]

/** Shifts: the hours employees are expected, which assignments give them. */
export function AttendanceShifts({ list }: { list: PagedList<Shift> }) {
  const { api } = useConsole()
  const { notice, changed } = useListNotice(list)
  const [open, setOpen] = useState<Open>()
  const close = () => setOpen(undefined)
  const path = (shift: Shift) => `${ATTENDANCE}/shifts/${encodeURIComponent(shift.code)}`

  return (
    <AttendanceSection
      title="Shifts"
      addLabel="Add shift"
      onAdd={() => setOpen({ kind: 'create' })}
      lead="The hours employees are expected, in the organisation's time zone. A shift that ends at or before its start ends the next day, and counts as the day it starts."
    >
      <LastNotice notice={notice} />
      <PagedTable
        list={list}
        empty={
          <EmptyState title="No shifts yet" forViewers="An owner or admin can add one.">
            Without a shift a day is the calendar day. Add one, then assign it below.
          </EmptyState>
        }
        caption="Shifts"
        columns={COLUMNS}
        rowKey={(s) => s.code}
        actions={(s) => (
          <span className="actions">
            <button
              type="button"
              onClick={() => setOpen({ kind: 'edit', shift: s })}
              aria-label={`Edit shift ${s.code}`}
            >
              Edit
            </button>
            <button
              type="button"
              className="button-danger"
              onClick={() => setOpen({ kind: 'delete', shift: s })}
              aria-label={`Delete shift ${s.code}`}
            >
              Delete
            </button>
          </span>
        )}
      />

      {open?.kind === 'create' ? (
        <AttendanceShiftDialog
          title="Add a shift"
          submitLabel="Add shift"
          onClose={close}
          onSubmit={async (input) => {
            await api.post(`${ATTENDANCE}/shifts`, input)
            changed(`Shift ${input.code} was added.`)
            close()
          }}
        />
      ) : null}
      {open?.kind === 'edit' ? (
        <AttendanceShiftDialog
          title={`Change shift ${open.shift.code}`}
          submitLabel="Save changes"
          shift={open.shift}
          onClose={close}
          onSubmit={async (input) => {
            await api.patch(path(open.shift), input)
            changed(
              `Shift ${open.shift.code} was saved. It applies to days computed from now on: recompute a period to apply it to days already computed.`,
            )
            close()
          }}
        />
      ) : null}
      {open?.kind === 'delete' ? (
        <ConfirmDialog
          title="Delete this shift?"
          confirmLabel="Delete shift"
          danger
          onClose={close}
          onConfirm={async () => {
            await api.delete(path(open.shift))
            changed(`Shift ${open.shift.code} was deleted.`)
          }}
        >
          <p>
            Shift <strong>{open.shift.code}</strong> ({shiftHours(open.shift)}) will be deleted. A shift that
            is still assigned cannot be: delete its assignments first.
          </p>
        </ConfirmDialog>
      ) : null}
    </AttendanceSection>
  )
}
