import { useState } from 'react'
import type { Holiday } from './api-types.js'
import { ATTENDANCE } from './attendance-api.js'
import { orNull } from './attendance-form.js'
import { AttendanceSection } from './attendance-section.js'
import { formatWorkDate } from './attendance-time.js'
import { useWholeList } from './attendance-whole-list.js'
import { ConfirmDialog } from './confirm-dialog.js'
import { useConsole } from './console-context.js'
import type { Column } from './data-table.js'
import { EmptyState } from './empty-state.js'
import { FormDialog } from './form-dialog.js'
import { LastNotice } from './last-notice.js'
import { PagedTable } from './paged-table.js'
import { TextField } from './text-field.js'
import { useListNotice } from './use-list-notice.js'
import { useSubmit } from './use-submit.js'

type Open = { kind: 'create' } | { kind: 'delete'; holiday: Holiday }

const COLUMNS: Column<Holiday>[] = [
  { heading: 'Date', cell: (h) => formatWorkDate(h.date) },
  { heading: 'Name', cell: (h) => h.name },
  { heading: 'For', cell: (h) => (h.group ? `Group ${h.group}` : 'Everyone') },
]

/** Holidays, for everyone or a group: days off that are not absences. */
export function AttendanceHolidays() {
  const { api } = useConsole()
  const list = useWholeList<Holiday>(`${ATTENDANCE}/holidays`)
  const { notice, changed } = useListNotice(list)
  const [open, setOpen] = useState<Open>()
  const close = () => setOpen(undefined)

  return (
    <AttendanceSection
      title="Holidays"
      addLabel="Add holiday"
      onAdd={() => setOpen({ kind: 'create' })}
      lead="Days off for everyone or for one group: not worked, they are off rather than absent; worked, they are flagged."
    >
      <LastNotice notice={notice} />
      <PagedTable
        list={list}
        empty={<EmptyState title="No holidays yet" forViewers="An owner or admin can add them." />}
        caption="Holidays"
        columns={COLUMNS}
        rowKey={(h) => h.id}
        actions={(h) => (
          <button
            type="button"
            className="button-danger"
            onClick={() => setOpen({ kind: 'delete', holiday: h })}
            aria-label={`Delete the holiday ${h.name} on ${formatWorkDate(h.date)}`}
          >
            Delete
          </button>
        )}
      />

      {open?.kind === 'create' ? (
        <HolidayDialog
          onClose={close}
          onAdded={(h) => {
            changed(`${h.name} on ${formatWorkDate(h.date)} was added.`)
            close()
          }}
        />
      ) : null}
      {open?.kind === 'delete' ? (
        <ConfirmDialog
          title="Delete this holiday?"
          confirmLabel="Delete holiday"
          danger
          onClose={close}
          onConfirm={async () => {
            await api.delete(`${ATTENDANCE}/holidays/${encodeURIComponent(open.holiday.id)}`)
            changed(`${open.holiday.name} on ${formatWorkDate(open.holiday.date)} was deleted.`)
          }}
        >
          <p>
            <strong>{open.holiday.name}</strong> on {formatWorkDate(open.holiday.date)} will no longer be a
            holiday in days computed from now on.
          </p>
        </ConfirmDialog>
      ) : null}
    </AttendanceSection>
  )
}

function HolidayDialog({ onClose, onAdded }: { onClose: () => void; onAdded: (holiday: Holiday) => void }) {
  const { api } = useConsole()
  const [date, setDate] = useState('')
  const [name, setName] = useState('')
  const [group, setGroup] = useState('')
  const submission = useSubmit(async () => {
    onAdded(
      await api.post<Holiday>(`${ATTENDANCE}/holidays`, { date, name: name.trim(), group: orNull(group) }),
    )
  })

  return (
    <FormDialog
      title="Add a holiday"
      submitLabel="Add holiday"
      busyLabel="Adding…"
      onClose={onClose}
      submission={submission}
    >
      <TextField label="Date" type="date" required value={date} onChange={setDate} data-initial-focus />
      <TextField label="Name" required maxLength={128} value={name} onChange={setName} />
      <TextField
        label="Group (optional)"
        hint="The department it is for. Empty: everyone."
        maxLength={128}
        value={group}
        onChange={setGroup}
      />
    </FormDialog>
  )
}
