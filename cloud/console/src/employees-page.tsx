import { useState } from 'react'
import type { Employee } from './api-types.js'
import { useConsole } from './console-context.js'
import type { Column } from './data-table.js'
import { EmployeeImport } from './employee-import.js'
import { EmptyState } from './empty-state.js'
import { FilterForm } from './filter-form.js'
import { PageLayout } from './page-layout.js'
import { PagedTable } from './paged-table.js'
import { SelectField } from './select-field.js'
import { StatusBadge } from './status-badge.js'
import { TextField } from './text-field.js'
import { TimeText } from './time-text.js'
import { usePagedList } from './use-paged-list.js'

const STATUS_TEXT = { ACTIVE: 'Active', INACTIVE: 'Inactive', TERMINATED: 'Left' } as const
const STATUS_CHOICES = [
  { value: '', label: 'Any status' },
  ...Object.entries(STATUS_TEXT).map(([value, label]) => ({ value, label })),
]
const COLUMNS: Column<Employee>[] = [
  { heading: 'Code', cell: (e) => <code>{e.employeeCode}</code> },
  { heading: 'Name', cell: (e) => e.name },
  { heading: 'Email', cell: (e) => e.email ?? <span className="muted">None</span> },
  { heading: 'Department', cell: (e) => e.department ?? '' },
  { heading: 'Location', cell: (e) => e.location ?? '' },
  {
    heading: 'Status',
    cell: (e) => <StatusBadge status={e.status.toLowerCase()} label={STATUS_TEXT[e.status]} />,
  },
  { heading: 'Changed', cell: (e) => <TimeText value={e.updatedAt} /> },
]

/** The employee directory: search it, filter by status, and (owners and admins) import a CSV. */
export function EmployeesPage() {
  const { canWrite } = useConsole()
  const [typed, setTyped] = useState('')
  const [search, setSearch] = useState('')
  const [status, setStatus] = useState('')
  const list = usePagedList<Employee>('/employees', { search, status })
  const filtered = search !== '' || status !== ''

  return (
    <PageLayout
      title="Employees"
      lead={
        <>
          The directory devices and payroll share: each employee's code is what their biometric device knows
          them by.
        </>
      }
    >
      <FilterForm label="Search employees" onSubmit={() => setSearch(typed.trim())}>
        <TextField
          label="Search"
          hint="Code, name or email."
          type="search"
          value={typed}
          onChange={setTyped}
        />
        <SelectField label="Status" value={status} onChange={setStatus} choices={STATUS_CHOICES} />
        <button type="submit">Search</button>
      </FilterForm>
      <PagedTable
        list={list}
        empty={
          filtered ? (
            <EmptyState title="No employee matches">
              Try part of the name or code, or another status.
            </EmptyState>
          ) : (
            <EmptyState title="No employees yet" forViewers="An owner or admin can import them.">
              Import a CSV file from your payroll or HR system below.
            </EmptyState>
          )
        }
        caption="Employees"
        columns={COLUMNS}
        rowKey={(e) => e.id}
      />
      {canWrite ? <EmployeeImport onImported={list.reload} /> : null}
    </PageLayout>
  )
}
