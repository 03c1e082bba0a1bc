import { useState } from 'react'
import type { AssignmentInput, Shift } from './api-types.js'
import { orNull } from './attendance-form.js'
import { FormDialog } from './form-dialog.js'
import { SelectField } from './select-field.js'
import { TextField } from './text-field.js'
import { useSubmit } from './use-submit.js'

type Target = 'tenant' | 'group' | 'employee'

const TARGET_CHOICES = [
  { value: 'employee', label: 'One employee' },
  { value: 'group', label: 'A group (department)' },
  { value: 'tenant', label: 'Everyone (the default)' },
]

interface AttendanceAssignmentDialogProps {
  shifts: Shift[]
  /** The date the assignment starts by default. */
  today: string
  onClose: () => void
  onSubmit: (input: AssignmentInput) => Promise<void>
}

/** Gives a shift to an employee, a group or everyone, from a date, until a date or for good. */
export function AttendanceAssignmentDialog({
  shifts,
  today,
  onClose,
  onSubmit,
}: AttendanceAssignmentDialogProps) {
  const [target, setTarget] = useState<Target>('employee')
  const [who, setWho] = useState('')
  const [shiftCode, setShiftCode] = useState(shifts[0]?.code ?? '')
  const [effectiveFrom, setEffectiveFrom] = useState(today)
  const [effectiveTo, setEffectiveTo] = useState('')
  const submission = useSubmit(
    () =>
      onSubmit({
        employeeCode: target === 'employee' ? who.trim() : null,
        group: target === 'group' ? who.trim() : null,
        shiftCode,
        effectiveFrom,
        effectiveTo: orNull(effectiveTo),
      }),
    () => {
      if (shiftCode === '') return 'Add a shift first: an assignment gives one.'
      if (target !== 'tenant' && who.trim() === '')
        return target === 'employee' ? 'Enter the employee code.' : 'Enter the group.'
      if (effectiveTo !== '' && effectiveTo < effectiveFrom) return 'The last date is before the first.'
      return undefined
    },
  )

  return (
    <FormDialog
      title="Assign a shift"
      submitLabel="Assign shift"
      busyLabel="Assigning…"
      onClose={onClose}
      submission={submission}
      intro={
        <p>
          An employee's own assignment wins over their group's, which wins over everyone's. It applies to days
          computed from now on: recompute the period to apply it to days already computed.
        </p>
      }
    >
      <SelectField
        label="For"
        value={target}
        onChange={(value) => setTarget(value as Target)}
        choices={TARGET_CHOICES}
        data-initial-focus
      />
      {target === 'employee' ? (
        <TextField label="Employee code" required maxLength={64} value={who} onChange={setWho} />
      ) : null}
      {target === 'group' ? (
        <TextField
          label="Group"
          hint="The department, as in the employee directory."
          required
          maxLength={128}
          value={who}
          onChange={setWho}
        />
      ) : null}
      <SelectField
        label="Shift"
        value={shiftCode}
        onChange={setShiftCode}
        choices={shifts.map((s) => ({
          value: s.code,
          label: `${s.code}${s.name ? `, ${s.name}` : ''} (${s.start}–${s.end})`,
        }))}
      />
      <TextField
        label="From"
        hint="First date (inclusive)."
        type="date"
        required
        value={effectiveFrom}
        onChange={setEffectiveFrom}
      />
      <TextField
        label="Until (optional)"
        hint="Last date (inclusive). Empty: for good."
        type="date"
        value={effectiveTo}
        onChange={setEffectiveTo}
      />
    </FormDialog>
  )
}
