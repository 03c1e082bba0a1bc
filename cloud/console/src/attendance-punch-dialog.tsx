import { useState } from 'react'
import { ATTENDANCE } from './attendance-api.js'
import { tenantLocalToRfc3339 } from './attendance-time.js'
import { useConsole } from './console-context.js'
import { FormDialog } from './form-dialog.js'
import { SelectField } from './select-field.js'
import { TextField } from './text-field.js'
import { useSubmit } from './use-submit.js'

const TYPE_CHOICES = [
  { value: 'IN', label: 'IN' },
  { value: 'OUT', label: 'OUT' },
]

interface AttendancePunchDialogProps {
  employeeCode: string
  workDate: string
  onClose: () => void
  /** The server took the punch (`punchedAt`, RFC 3339): the day is recomputed from it. */
  onAdded: (punchedAt: string) => void
}

/** A punch the device missed, typed in by hand with the reason; it is recorded as a correction. */
export function AttendancePunchDialog({
  employeeCode,
  workDate,
  onClose,
  onAdded,
}: AttendancePunchDialogProps) {
  const { api, tenant } = useConsole()
  const [punchType, setPunchType] = useState('IN')
  const [date, setDate] = useState(workDate)
  const [time, setTime] = useState('')
  const [reason, setReason] = useState('')
  const punchedAt = () => tenantLocalToRfc3339(date, time, tenant.timeZone)
  const submission = useSubmit(
    async () => {
      const at = punchedAt() as string
      await api.post(`${ATTENDANCE}/punches`, {
        employeeCode,
        punchType,
        punchedAt: at,
        source: 'manual',
        reason: reason.trim(),
      })
      onAdded(at)
    },
    () => {
      if (punchedAt() === undefined) return 'Enter the date and time of the punch.'
      if (reason.trim() === '') return 'Say why the punch is added: it is kept with the correction.'
      return undefined
    },
  )

  return (
    <FormDialog
      title={`Add a punch for ${employeeCode}`}
      submitLabel="Add punch"
      busyLabel="Adding…"
      onClose={onClose}
      submission={submission}
      intro={
        <p>
          For a punch the device missed. It counts like any other punch, is marked as entered by hand, and is
          recorded with your reason.
        </p>
      }
    >
      <SelectField label="Punch" value={punchType} onChange={setPunchType} choices={TYPE_CHOICES} />
      <TextField
        label="Date"
        hint="A night shift's OUT falls on the next date."
        type="date"
        required
        value={date}
        onChange={setDate}
      />
      <TextField
        label="Time"
        hint={`In the organisation's time zone, ${tenant.timeZone}.`}
        type="time"
        required
        value={time}
        onChange={setTime}
        data-initial-focus
      />
      <TextField
        label="Reason"
        hint="Why: for payroll and the audit log."
        required
        maxLength={500}
        value={reason}
        onChange={setReason}
      />
    </FormDialog>
  )
}
