import { useState } from 'react'
import type { Policy, PolicySettings } from './api-types.js'
import { ATTENDANCE } from './attendance-api.js'
import { AttendancePolicyDialog } from './attendance-policy-dialog.js'
import { describeSetting, POLICY_LABELS, type PolicyKey } from './attendance-policy-fields.js'
import { AttendanceSection } from './attendance-section.js'
import { useWholeList } from './attendance-whole-list.js'
import { ConfirmDialog } from './confirm-dialog.js'
import { useConsole } from './console-context.js'
import type { Column } from './data-table.js'
import { EmptyState } from './empty-state.js'
import { LastNotice } from './last-notice.js'
import { PagedTable } from './paged-table.js'
import { TimeText } from './time-text.js'
import { useListNotice } from './use-list-notice.js'

type Open = { kind: 'create' } | { kind: 'edit'; policy: Policy } | { kind: 'delete'; policy: Policy }

const groupName = (policy: Policy) => policy.group ?? 'Organisation default'

/** Settings as a list of facts: "Full day: 480 min (8:00)". */
function Settings({ settings }: { settings: PolicySettings }) {
  const keys = (Object.keys(POLICY_LABELS) as PolicyKey[]).filter((k) => settings[k] !== undefined)
  if (keys.length === 0) return <span className="muted">Nothing: all inherited</span>
  return (
    <dl className="facts attendance-settings-facts">
      {keys.map((k) => (
        <div key={k} className="attendance-fact">
          <dt>{POLICY_LABELS[k]}</dt>
          <dd>{describeSetting(k, settings[k])}</dd>
        </div>
      ))}
    </dl>
  )
}

const COLUMNS: Column<Policy>[] = [
  { heading: 'Group', cell: (p) => (p.group ? <code>{p.group}</code> : groupName(p)) },
  { heading: 'Set here', cell: (p) => <Settings settings={p.settings} /> },
  {
    heading: 'In effect',
    cell: (p) => (
      <details>
        <summary>Every setting</summary>
        <Settings settings={p.effective} />
      </details>
    ),
  },
  { heading: 'Version', cell: (p) => p.version },
  { heading: 'Changed', cell: (p) => <TimeText value={p.updatedAt} /> },
]

/** The rules days are computed by: the organisation's default, and a policy per group (department). */
export function AttendancePolicies() {
  const { api } = useConsole()
  const list = useWholeList<Policy>(`${ATTENDANCE}/policies`)
  const { notice, changed } = useListNotice(list)
  const [open, setOpen] = useState<Open>()
  const close = () => setOpen(undefined)
  const path = (policy: Policy) => `${ATTENDANCE}/policies/${encodeURIComponent(policy.id)}`
  const tenantDefault = list.items.find((p) => p.group === null)

  return (
    <AttendanceSection
      title="Policies"
      addLabel="Add policy"
      onAdd={() => setOpen({ kind: 'create' })}
      lead={
        <>
          What counts as a full or half day, how punches pair, overtime and the legal limits. A group's policy
          (employees of one department) overrides the organisation's default, which overrides the legal
          regime's defaults. A change applies to days computed after it: recompute a period to apply it to
          past days.
        </>
      }
    >
      <LastNotice notice={notice} />
      <PagedTable
        list={list}
        empty={
          <EmptyState title="No policies yet" forViewers="The legal regime's defaults apply.">
            The legal regime's defaults apply until you add the organisation's policy.
          </EmptyState>
        }
        caption="Attendance policies"
        columns={COLUMNS}
        rowKey={(p) => p.id}
        actions={(p) => (
          <span className="actions">
            <button
              type="button"
              onClick={() => setOpen({ kind: 'edit', policy: p })}
              aria-label={`Edit the policy of ${groupName(p)}`}
            >
              Edit
            </button>
            <button
              type="button"
              className="button-danger"
              onClick={() => setOpen({ kind: 'delete', policy: p })}
              aria-label={`Delete the policy of ${groupName(p)}`}
            >
              Delete
            </button>
          </span>
        )}
      />

      {open?.kind === 'create' ? (
        <AttendancePolicyDialog
          title="Add a policy"
          submitLabel="Add policy"
          askGroup
          initial={{}}
          effective={tenantDefault?.effective}
          onClose={close}
          onSubmit={async ({ group, settings }) => {
            await api.post(`${ATTENDANCE}/policies`, { group, ...settings })
            changed(`The policy of ${group ?? 'the organisation'} was added.`)
            close()
          }}
        />
      ) : null}
      {open?.kind === 'edit' ? (
        <AttendancePolicyDialog
          title={`Change the policy of ${groupName(open.policy)}`}
          submitLabel="Save changes"
          askGroup={false}
          initial={open.policy.settings}
          effective={open.policy.effective}
          onClose={close}
          onSubmit={async ({ settings }) => {
            await api.patch(path(open.policy), settings)
            changed(`The policy of ${groupName(open.policy)} was saved.`)
            close()
          }}
        />
      ) : null}
      {open?.kind === 'delete' ? (
        <ConfirmDialog
          title="Delete this policy?"
          confirmLabel="Delete policy"
          danger
          onClose={close}
          onConfirm={async () => {
            await api.delete(path(open.policy))
            changed(`The policy of ${groupName(open.policy)} was deleted.`)
          }}
        >
          <p>
            Days of <strong>{groupName(open.policy)}</strong> computed from now on follow the policy above it
            {open.policy.group === null ? " (the legal regime's defaults)" : " (the organisation's default)"}.
          </p>
        </ConfirmDialog>
      ) : null}
    </AttendanceSection>
  )
}
