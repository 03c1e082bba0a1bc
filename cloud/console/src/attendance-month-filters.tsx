import { useEffect, useState } from 'react'
import { addMonths, formatMonth, isMonth, type Month } from './attendance-month.js'
import { FilterForm } from './filter-form.js'
import { TextField } from './text-field.js'

interface AttendanceMonthFiltersProps {
  month: Month
  employeeCode: string
  onFilter: (name: 'month' | 'employeeCode', value: string) => void
}

/** Which month, the one before or after, and (typed, then applied) one employee's code. */
export function AttendanceMonthFilters({ month, employeeCode, onFilter }: AttendanceMonthFiltersProps) {
  const [typed, setTyped] = useState(employeeCode)
  // The address may change the filter (back, a link): the field follows.
  useEffect(() => setTyped(employeeCode), [employeeCode])
  const previous = addMonths(month, -1)
  const next = addMonths(month, 1)

  return (
    <FilterForm
      label="Choose the month and employee"
      onSubmit={() => onFilter('employeeCode', typed.trim())}
      onClear={employeeCode !== '' ? () => onFilter('employeeCode', '') : undefined}
    >
      <TextField
        label="Month"
        type="month"
        required
        value={month}
        onChange={(value) => {
          if (isMonth(value)) onFilter('month', value)
        }}
      />
      {/* The name starts with the visible text (WCAG 2.5.3), then says which month. */}
      <button
        type="button"
        onClick={() => onFilter('month', previous)}
        aria-label={`Previous month, ${formatMonth(previous)}`}
      >
        <span aria-hidden="true">← </span>Previous
      </button>
      <button
        type="button"
        onClick={() => onFilter('month', next)}
        aria-label={`Next month, ${formatMonth(next)}`}
      >
        Next<span aria-hidden="true"> →</span>
      </button>
      <TextField
        label="Employee code"
        hint="Empty: everyone."
        type="search"
        maxLength={64}
        value={typed}
        onChange={setTyped}
      />
      <button type="submit">Show</button>
    </FilterForm>
  )
}
