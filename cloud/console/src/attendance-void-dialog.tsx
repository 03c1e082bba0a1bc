import { useState } from 'react'
import type { DayPunch } from './api-types.js'
import { ATTENDANCE } from './attendance-api.js'
import { timeInDay } from './attendance-time.js'
import { useConsole } from './console-context.js'
import { FormDialog } from './form-dialog.js'
import { TextField } from './text-field.js'
import { useSubmit } from './use-submit.js'

interface AttendanceVoidDialogProps {
  employeeCode: string
  workDate: string
  punch: DayPunch
  onClose: () => void
  onVoided: () => void
}

/** Asks before voiding a punch, and why: the punch stays in the log, and no longer counts. */
export function AttendanceVoidDialog({
  employeeCode,
  workDate,
  punch,
  onClose,
  onVoided,
}: AttendanceVoidDialogProps) {
  const { api } = useConsole()
  const [reason, setReason] = useState('')
  const submission = useSubmit(
    async () => {
      await api.post(`${ATTENDANCE}/punches/${encodeURIComponent(punch.id)}/void`, { reason: reason.trim() })
      onVoided()
    },
    () => (reason.trim() === '' ? 'Say why the punch is voided: it is kept with the correction.' : undefined),
  )

  return (
    <FormDialog
      title="Void this punch?"
      submitLabel="Void punch"
      busyLabel="Voiding…"
      onClose={onClose}
      submission={submission}
      intro={
        <p>
          The <strong>{punch.punchType}</strong> punch of <strong>{employeeCode}</strong> at{' '}
          <strong>{timeInDay(punch.punchedAt, workDate)}</strong> will no longer count, and the day is
          computed again without it. The punch itself stays in the punch log, and the void is recorded with
          your reason. It cannot be undone here: add a punch instead if it was needed.
        </p>
      }
    >
      <TextField
        label="Reason"
        hint="Why: for payroll and the audit log."
        required
        maxLength={500}
        value={reason}
        onChange={setReason}
        data-initial-focus
      />
    </FormDialog>
  )
}
