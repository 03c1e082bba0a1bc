import { useState } from 'react'
import type { PolicySettings } from './api-types.js'
import { orNull } from './attendance-form.js'
import {
  describeSetting,
  formToPolicy,
  POLICY_FIELDS,
  type PolicyField,
  policyToForm,
  WEEKDAYS,
} from './attendance-policy-fields.js'
import { AttendanceWeekdaysField } from './attendance-weekdays-field.js'
import { FormDialog, type FormDialogTexts } from './form-dialog.js'
import { SelectField } from './select-field.js'
import { TextField } from './text-field.js'
import { useSubmit } from './use-submit.js'

interface AttendancePolicyDialogProps extends FormDialogTexts {
  /** Asked for when adding a policy; a policy's group does not change. */
  askGroup: boolean
  initial: PolicySettings
  /** The policy in effect now (each field's hint says it), when there is one. */
  effective?: PolicySettings | undefined
  onSubmit: (input: { group?: string | null; settings: PolicySettings }) => Promise<void>
}

/** A policy's settings: each one set here, or left empty to inherit it. */
export function AttendancePolicyDialog({
  askGroup,
  initial,
  effective,
  onSubmit,
  ...dialog
}: AttendancePolicyDialogProps) {
  const [group, setGroup] = useState('')
  const [form, setForm] = useState(() => policyToForm(initial))
  const submission = useSubmit(
    async () => {
      const { settings } = formToPolicy(form)
      await onSubmit(askGroup ? { group: orNull(group), settings } : { settings })
    },
    () => formToPolicy(form).error,
  )
  const setText = (name: PolicyField['name'], value: string) =>
    setForm({ ...form, texts: { ...form.texts, [name]: value } })
  const hintOf = (field: PolicyField) =>
    effective && effective[field.name] !== undefined
      ? `${field.hint} In effect now: ${describeSetting(field.name, effective[field.name])}.`
      : field.hint

  return (
    <FormDialog
      {...dialog}
      submission={submission}
      busyLabel="Saving…"
      wide
      intro={
        <p>
          Leave a field empty to inherit it: a group's policy from the organisation's, the organisation's from
          the legal regime's defaults.
        </p>
      }
    >
      {askGroup ? (
        <TextField
          label="Group"
          hint="The department of the employees it is for. Empty: the organisation's default policy."
          maxLength={128}
          value={group}
          onChange={setGroup}
          data-initial-focus
        />
      ) : null}
      <div className="attendance-form-grid">
        {POLICY_FIELDS.map((field) =>
          field.kind === 'minutes' || field.kind === 'seconds' ? (
            <TextField
              key={field.name}
              label={field.label}
              hint={hintOf(field)}
              type="number"
              min={0}
              step={1}
              inputMode="numeric"
              placeholder="Inherit"
              value={form.texts[field.name]}
              onChange={(value) => setText(field.name, value)}
            />
          ) : (
            <SelectField
              key={field.name}
              label={field.label}
              hint={hintOf(field)}
              value={form.texts[field.name]}
              onChange={(value) => setText(field.name, value)}
              choices={[{ value: '', label: 'Inherit' }, ...choicesOf(field)]}
            />
          ),
        )}
      </div>
      <AttendanceWeekdaysField
        days={form.offDays}
        onChange={(offDays) => setForm({ ...form, offDays })}
        inEffect={
          effective?.weeklyOffDays ? describeSetting('weeklyOffDays', effective.weeklyOffDays) : undefined
        }
      />
    </FormDialog>
  )
}

function choicesOf(field: PolicyField): { value: string; label: string }[] {
  switch (field.kind) {
    case 'choice':
      return Object.entries(field.choices).map(([value, label]) => ({ value, label }))
    case 'boolean':
      return [
        { value: 'true', label: 'Yes' },
        { value: 'false', label: 'No' },
      ]
    case 'weekday':
      return WEEKDAYS.map((label, day) => ({ value: String(day), label }))
    default:
      return []
  }
}
