import { useState } from 'react'
import type { AuditEntry } from './api-types.js'
import { AuditTable, actionText, KNOWN_ACTIONS } from './audit-table.js'
import { EmptyState } from './empty-state.js'
import type { Binding } from './field.js'
import { FilterForm } from './filter-form.js'
import { localInputToRfc3339 } from './format.js'
import { PageLayout } from './page-layout.js'
import { PagedItems } from './paged-items.js'
import { PeriodFields } from './period-fields.js'
import { RefreshButton } from './refresh-button.js'
import { SelectField } from './select-field.js'
import { TextField } from './text-field.js'
import { usePagedList } from './use-paged-list.js'
import { useUserEmails } from './use-user-emails.js'

const EMPTY = { action: '', actor: '', targetType: '', targetId: '', from: '', to: '' }
const ACTION_CHOICES = [
  { value: '', label: 'Any action' },
  ...KNOWN_ACTIONS.map((a) => ({ value: a, label: actionText(a) })),
]

/** The audit log, newest first: every change to credentials and webhooks, and who made it. */
export function AuditPage() {
  const [form, setForm] = useState(EMPTY)
  const [applied, setApplied] = useState(EMPTY)
  const emails = useUserEmails()
  const list = usePagedList<AuditEntry>('/audit', {
    action: applied.action.trim(),
    actor: applied.actor.trim(),
    targetType: applied.targetType.trim(),
    targetId: applied.targetId.trim(),
    from: localInputToRfc3339(applied.from),
    to: localInputToRfc3339(applied.to),
  })
  const filtered = Object.values(applied).some((v) => v !== '')
  const bind = (name: keyof typeof EMPTY): Binding => ({
    value: form[name],
    onChange: (value) => setForm({ ...form, [name]: value }),
  })

  return (
    <PageLayout
      title="Audit log"
      actions={<RefreshButton list={list} />}
      lead={
        <>
          Every key, app and webhook change, every secret shown and every retry, with who did it and from
          where. It cannot be edited or deleted.
        </>
      }
    >
      <FilterForm
        label="Filter the audit log"
        onSubmit={() => setApplied(form)}
        onClear={
          filtered
            ? () => {
                setForm(EMPTY)
                setApplied(EMPTY)
              }
            : undefined
        }
      >
        <SelectField label="Action" {...bind('action')} choices={ACTION_CHOICES} />
        <TextField
          label="Who"
          hint="e.g. console_user:usr_…, oauth_app:app_…, cli:alice"
          {...bind('actor')}
        />
        <TextField label="Object type" hint="e.g. api_key, webhook_delivery" {...bind('targetType')} />
        <TextField label="Object id" {...bind('targetId')} />
        <PeriodFields from={bind('from')} to={bind('to')} />
        <button type="submit" className="button-primary">
          Filter
        </button>
      </FilterForm>
      <PagedItems
        list={list}
        empty={
          filtered ? (
            <EmptyState title="Nothing matches these filters">Change or clear the filters.</EmptyState>
          ) : (
            <EmptyState title="Nothing recorded yet">
              Changes to keys, apps and webhooks will be listed here.
            </EmptyState>
          )
        }
      >
        {(entries) => <AuditTable entries={entries} emails={emails} caption="Audit log, newest first" />}
      </PagedItems>
    </PageLayout>
  )
}
