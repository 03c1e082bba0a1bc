import { type FormEvent, useState } from 'react'
import type { Employee } from './api-types.js'
import { useConsole } from './console-context.js'
import { EmployeeImport } from './employee-import.js'
import { EmptyState } from './empty-state.js'
import { Field } from './field.js'
import { ListLoading } from './list-loading.js'
import { LoadMoreButton } from './load-more-button.js'
import { Notice } from './notice.js'
import { StatusBadge } from './status-badge.js'
import { TimeText } from './time-text.js'
import { usePagedList } from './use-paged-list.js'

const STATUS_TEXT = { ACTIVE: 'Active', INACTIVE: 'Inactive', TERMINATED: 'Left' } as const

/** The employee directory: search it, filter by status, and (owners and admins) import a CSV. */
export function EmployeesPage() {
  const { canWrite } = useConsole()
  const [typed, setTyped] = useState('')
  const [search, setSearch] = useState('')
  const [status, setStatus] = useState('')
  const list = usePagedList<Employee>('/employees', { search, status })

  const submit = (event: FormEvent) => {
    event.preventDefault()
    setSearch(typed.trim())
  }
  const filtered = search !== '' || status !== ''

  return (
    <section>
      <div className="page-header">
        <h1 tabIndex={-1}>Employees</h1>
      </div>
      <p className="lead">
        The directory devices and payroll share: each employee's code is what their biometric device knows
        them by.
      </p>
      <form className="filters" aria-label="Search employees" onSubmit={submit}>
        <Field label="Search" hint="Code, name or email.">
          <input type="search" value={typed} onChange={(e) => setTyped(e.target.value)} />
        </Field>
        <Field label="Status">
          <select value={status} onChange={(e) => setStatus(e.target.value)}>
            <option value="">Any status</option>
            {Object.entries(STATUS_TEXT).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </Field>
        <button type="submit">Search</button>
      </form>
      {list.error ? <Notice kind="error">{list.error}</Notice> : null}
      <ListLoading list={list} />
      {list.loaded && list.items.length === 0 ? (
        <EmptyState title={filtered ? 'No employee matches' : 'No employees yet'}>
          {filtered
            ? 'Try part of the name or code, or another status.'
            : canWrite
              ? 'Import a CSV file from your payroll or HR system below.'
              : 'An owner or admin can import them.'}
        </EmptyState>
      ) : null}
      {list.items.length > 0 ? (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Employees</caption>
            <thead>
              <tr>
                <th scope="col">Code</th>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Department</th>
                <th scope="col">Location</th>
                <th scope="col">Status</th>
                <th scope="col">Changed</th>
              </tr>
            </thead>
            <tbody>
              {list.items.map((e) => (
                <tr key={e.id}>
                  <td>
                    <code>{e.employeeCode}</code>
                  </td>
                  <td>{e.name}</td>
                  <td>{e.email ?? <span className="muted">None</span>}</td>
                  <td>{e.department ?? ''}</td>
                  <td>{e.location ?? ''}</td>
                  <td>
                    <StatusBadge status={e.status.toLowerCase()} label={STATUS_TEXT[e.status]} />
                  </td>
                  <td>
                    <TimeText value={e.updatedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <LoadMoreButton list={list} />
      {canWrite ? <EmployeeImport onImported={list.reload} /> : null}
    </section>
  )
}
