import { type FormEvent, useState } from 'react'
import type { AuditEntry } from './api-types.js'
import { AuditTable, actionText, KNOWN_ACTIONS } from './audit-table.js'
import { EmptyState } from './empty-state.js'
import { Field } from './field.js'
import { localInputToRfc3339 } from './format.js'
import { ListLoading } from './list-loading.js'
import { LoadMoreButton } from './load-more-button.js'
import { Notice } from './notice.js'
import { usePagedList } from './use-paged-list.js'
import { useUserEmails } from './use-user-emails.js'

const EMPTY = { action: '', actor: '', targetType: '', targetId: '', from: '', to: '' }

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
  const set = (name: keyof typeof EMPTY) => (value: string) => setForm({ ...form, [name]: value })

  const submit = (event: FormEvent) => {
    event.preventDefault()
    setApplied(form)
  }

  return (
    <section>
      <div className="page-header">
        <h1 tabIndex={-1}>Audit log</h1>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </div>
      <p className="lead">
        Every key, app and webhook change, every secret shown and every retry, with who did it and from where.
        It cannot be edited or deleted.
      </p>
      <form className="filters" aria-label="Filter the audit log" onSubmit={submit}>
        <Field label="Action">
          <select value={form.action} onChange={(e) => set('action')(e.target.value)}>
            <option value="">Any action</option>
            {KNOWN_ACTIONS.map((a) => (
              <option key={a} value={a}>
                {actionText(a)}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Who" hint="e.g. console_user:usr_…, oauth_app:app_…, cli:alice">
          <input value={form.actor} onChange={(e) => set('actor')(e.target.value)} />
        </Field>
        <Field label="Object type" hint="e.g. api_key, webhook_delivery">
          <input value={form.targetType} onChange={(e) => set('targetType')(e.target.value)} />
        </Field>
        <Field label="Object id">
          <input value={form.targetId} onChange={(e) => set('targetId')(e.target.value)} />
        </Field>
        <Field label="From">
          <input type="datetime-local" value={form.from} onChange={(e) => set('from')(e.target.value)} />
        </Field>
        <Field label="Until">
          <input type="datetime-local" value={form.to} onChange={(e) => set('to')(e.target.value)} />
        </Field>
        <button type="submit" className="button-primary">
          Filter
        </button>
        {filtered ? (
          <button
            type="button"
            className="button-link"
            onClick={() => {
              setForm(EMPTY)
              setApplied(EMPTY)
            }}
          >
            Clear filters
          </button>
        ) : null}
      </form>
      {list.error ? <Notice kind="error">{list.error}</Notice> : null}
      <ListLoading list={list} />
      {list.loaded && list.items.length === 0 ? (
        <EmptyState title={filtered ? 'Nothing matches these filters' : 'Nothing recorded yet'}>
          {filtered
            ? 'Change or clear the filters.'
            : 'Changes to keys, apps and webhooks will be listed here.'}
        </EmptyState>
      ) : null}
      {list.items.length > 0 ? (
        <AuditTable entries={list.items} emails={emails} caption="Audit log, newest first" />
      ) : null}
      <LoadMoreButton list={list} />
    </section>
  )
}
