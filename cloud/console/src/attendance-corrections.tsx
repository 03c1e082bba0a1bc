import type { Correction } from './api-types.js'
import { ATTENDANCE } from './attendance-api.js'
import type { Column } from './data-table.js'
import { EmptyState } from './empty-state.js'
import { PagedTable } from './paged-table.js'
import { RefreshButton } from './refresh-button.js'
import { StatusBadge } from './status-badge.js'
import { TimeText } from './time-text.js'
import { usePagedList } from './use-paged-list.js'
import { useUserEmails } from './use-user-emails.js'

const KIND_TEXT: Record<Correction['kind'], string> = { manual: 'Punch added', void: 'Punch voided' }

/** "console_user:usr_…" → the console user's email when it is known; else the credential as it is. */
function actorText(actor: string, emails: ReadonlyMap<string, string>): string {
  return emails.get(actor.slice(actor.lastIndexOf(':') + 1)) ?? actor
}

/** The corrections made to punches, newest first: who added or voided which punch, and why. */
export function AttendanceCorrections() {
  const list = usePagedList<Correction>(`${ATTENDANCE}/corrections`)
  const emails = useUserEmails()
  const columns: Column<Correction>[] = [
    { heading: 'When', cell: (c) => <TimeText value={c.createdAt} /> },
    {
      heading: 'Correction',
      cell: (c) => <StatusBadge status={`correction-${c.kind}`} label={KIND_TEXT[c.kind]} />,
    },
    { heading: 'Punch', cell: (c) => <code>{c.punchId}</code> },
    { heading: 'Reason', cell: (c) => c.reason },
    { heading: 'By', className: 'url', cell: (c) => actorText(c.actor, emails) },
  ]

  return (
    <>
      <p className="actions">
        <RefreshButton list={list} />
      </p>
      <PagedTable
        list={list}
        empty={
          <EmptyState title="No corrections yet">
            A punch added by hand or voided, from a day in the month view or through the API, is listed here
            with its reason.
          </EmptyState>
        }
        caption="Corrections, newest first"
        columns={columns}
        rowKey={(c) => `${c.punchId}-${c.kind}-${c.createdAt}`}
      />
    </>
  )
}
