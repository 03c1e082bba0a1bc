import { useState } from 'react'
import type { Shift, ShiftInput } from './api-types.js'
import { orNull, wholeNumbers } from './attendance-form.js'
import { FormDialog, type FormDialogTexts } from './form-dialog.js'
import { TextField } from './text-field.js'
import { useSubmit } from './use-submit.js'

const MINUTE_FIELDS = {
  unpaidBreakMinutes: 'Unpaid break (minutes)',
  lateGraceMinutes: 'Late grace (minutes)',
  earlyExitGraceMinutes: 'Early exit grace (minutes)',
  earlyWindowMinutes: 'Early window (minutes)',
  lateWindowMinutes: 'Late window (minutes)',
} as const
type MinuteField = keyof typeof MINUTE_FIELDS

const MINUTE_HINTS: Record<MinuteField, string> = {
  unpaidBreakMinutes: 'Deducted when the punches show no break. Empty: 0.',
  lateGraceMinutes: 'An IN this long after the start is not late. Empty: 0.',
  earlyExitGraceMinutes: 'An OUT this long before the end is not an early exit. Empty: 0.',
  earlyWindowMinutes: 'Punches this long before the start count for the shift. Empty: 120.',
  lateWindowMinutes: 'Punches this long after the end count for the shift. Empty: 240.',
}

interface AttendanceShiftDialogProps extends FormDialogTexts {
  /** The shift to change; none to add one. */
  shift?: Shift | undefined
  /** The whole shift (a change replaces it; the minutes left empty take the server's defaults). */
  onSubmit: (input: ShiftInput) => Promise<void>
}

/** A shift's hours, break, grace and windows: for adding one and for changing one. */
export function AttendanceShiftDialog({ shift, onSubmit, ...dialog }: AttendanceShiftDialogProps) {
  const [code, setCode] = useState(shift?.code ?? '')
  const [name, setName] = useState(shift?.name ?? '')
  const [start, setStart] = useState(shift?.start ?? '')
  const [end, setEnd] = useState(shift?.end ?? '')
  const [minutes, setMinutes] = useState<Record<MinuteField, string>>(() => {
    const texts = {} as Record<MinuteField, string>
    for (const f of Object.keys(MINUTE_FIELDS) as MinuteField[]) texts[f] = shift ? String(shift[f]) : ''
    return texts
  })
  const submission = useSubmit(
    async () => {
      const { values } = wholeNumbers(minutes, MINUTE_FIELDS)
      await onSubmit({ code: code.trim(), name: orNull(name), start, end, ...values })
    },
    () => wholeNumbers(minutes, MINUTE_FIELDS).error,
  )

  return (
    <FormDialog {...dialog} submission={submission} busyLabel="Saving…" wide>
      <div className="attendance-form-grid">
        <TextField
          label="Code"
          hint={
            shift
              ? 'A shift keeps its code: add a new shift for another one.'
              : 'How assignments name it: letters, digits, dot, dash or underscore.'
          }
          required
          readOnly={shift !== undefined}
          maxLength={32}
          pattern="[A-Za-z0-9][A-Za-z0-9._\-]*"
          value={code}
          onChange={setCode}
          data-initial-focus={shift === undefined}
        />
        <TextField label="Name (optional)" maxLength={128} value={name} onChange={setName} />
        <TextField label="Starts" hint="Local time." type="time" required value={start} onChange={setStart} />
        <TextField
          label="Ends"
          hint="At or before the start: the next day (a night shift)."
          type="time"
          required
          value={end}
          onChange={setEnd}
        />
        {(Object.keys(MINUTE_FIELDS) as MinuteField[]).map((f) => (
          <TextField
            key={f}
            label={MINUTE_FIELDS[f]}
            hint={MINUTE_HINTS[f]}
            type="number"
            min={0}
            step={1}
            inputMode="numeric"
            value={minutes[f]}
            onChange={(value) => setMinutes({ ...minutes, [f]: value })}
          />
        ))}
      </div>
    </FormDialog>
  )
}
