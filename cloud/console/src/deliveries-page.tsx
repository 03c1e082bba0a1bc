import { useMemo, useState } from 'react'
import type { WebhookDelivery, WebhookEndpoint } from './api-types.js'
import { useConsole } from './console-context.js'
import type { Column } from './data-table.js'
import { DeliveryDetailDialog } from './delivery-detail-dialog.js'
import { DELIVERY_STATUS_TEXT, DELIVERY_STATUSES } from './delivery-status.js'
import { EmptyState } from './empty-state.js'
import type { Binding } from './field.js'
import { FilterForm } from './filter-form.js'
import { localInputToRfc3339 } from './format.js'
import { PageLayout } from './page-layout.js'
import { PagedTable } from './paged-table.js'
import { PeriodFields } from './period-fields.js'
import { RefreshButton } from './refresh-button.js'
import { ReplayForm } from './replay-form.js'
import { navigate, useLocation } from './router.js'
import { SelectField } from './select-field.js'
import { StatusBadge } from './status-badge.js'
import { TimeText } from './time-text.js'
import { useEventCatalog } from './use-event-catalog.js'
import { usePagedList } from './use-paged-list.js'

const FILTERS = ['endpointId', 'status', 'eventType', 'from', 'to'] as const
const STATUS_CHOICES = [
  { value: '', label: 'Any status' },
  ...DELIVERY_STATUSES.map((s) => ({ value: s, label: DELIVERY_STATUS_TEXT[s] })),
]
type Filters = Record<(typeof FILTERS)[number], string>

/** The delivery log: filters kept in the address (so a link can point at a filtered log), details, retry, replay. */
export function DeliveriesPage() {
  const { canWrite } = useConsole()
  const { search } = useLocation()
  const filters = Object.fromEntries(FILTERS.map((f) => [f, search.get(f) ?? ''])) as Filters
  const query = {
    endpointId: filters.endpointId,
    status: filters.status,
    eventType: filters.eventType,
    from: localInputToRfc3339(filters.from),
    to: localInputToRfc3339(filters.to),
  }
  const list = usePagedList<WebhookDelivery>('/webhook-deliveries', query)
  const endpoints = usePagedList<WebhookEndpoint>('/webhooks')
  const catalog = useEventCatalog()
  const [shown, setShown] = useState<string>()
  const urlOf = useMemo(() => new Map(endpoints.items.map((e) => [e.id, e.url])), [endpoints.items])

  const setFilter = (name: keyof Filters, value: string) => {
    const next = new URLSearchParams(search)
    if (value === '') next.delete(name)
    else next.set(name, value)
    const text = next.toString()
    navigate(`/deliveries${text ? `?${text}` : ''}`, { replace: true })
  }
  const filtered = FILTERS.some((f) => filters[f] !== '')
  const bind = (name: keyof Filters): Binding => ({
    value: filters[name],
    onChange: (value) => setFilter(name, value),
  })

  const endpointChoices = [
    { value: '', label: 'All endpoints' },
    // The filter holds from the address at once; the endpoints' URLs come a moment later.
    ...(filters.endpointId !== '' && !urlOf.has(filters.endpointId)
      ? [{ value: filters.endpointId, label: filters.endpointId }]
      : []),
    ...endpoints.items.map((e) => ({ value: e.id, label: e.url })),
  ]
  const eventChoices = [
    { value: '', label: 'Any event' },
    ...catalog.map((t) => ({ value: t.type, label: t.type })),
  ]
  const columns: Column<WebhookDelivery>[] = [
    { heading: 'Created', cell: (d) => <TimeText value={d.createdAt} /> },
    { heading: 'Event', cell: (d) => <code>{d.eventType}</code> },
    { heading: 'Endpoint', className: 'url', cell: (d) => urlOf.get(d.endpointId) ?? d.endpointId },
    {
      heading: 'Status',
      cell: (d) => <StatusBadge status={d.status} label={DELIVERY_STATUS_TEXT[d.status]} />,
    },
    { heading: 'Attempts', cell: (d) => d.attempts },
    { heading: 'Next attempt', cell: (d) => <TimeText value={d.nextAttemptAt} empty="None" /> },
    {
      heading: 'Details',
      headingHidden: true,
      cell: (d) => (
        <button type="button" onClick={() => setShown(d.id)} aria-label={`Details of delivery ${d.id}`}>
          Details
        </button>
      ),
    },
  ]

  return (
    <PageLayout
      title="Webhook deliveries"
      actions={<RefreshButton list={list} />}
      lead={
        <>
          Every event sent to your endpoints, newest first, with each attempt and what the endpoint answered.
          A delivery that fails is retried automatically for about a day and a half.
        </>
      }
    >
      <FilterForm
        label="Filter deliveries"
        onClear={filtered ? () => navigate('/deliveries', { replace: true }) : undefined}
      >
        <SelectField label="Endpoint" {...bind('endpointId')} choices={endpointChoices} />
        <SelectField label="Status" {...bind('status')} choices={STATUS_CHOICES} />
        <SelectField label="Event" {...bind('eventType')} choices={eventChoices} />
        <PeriodFields from={bind('from')} to={bind('to')} />
      </FilterForm>

      <PagedTable
        list={list}
        empty={
          filtered ? (
            <EmptyState title="No delivery matches these filters">
              Change or clear the filters to see more.
            </EmptyState>
          ) : (
            <EmptyState title="No deliveries yet">
              Deliveries appear here when an event is sent to one of your webhook endpoints. Send a test event
              from the Webhooks page to see one.
            </EmptyState>
          )
        }
        caption="Deliveries, newest first"
        columns={columns}
        rowKey={(d) => d.id}
      />

      {canWrite ? <ReplayForm endpoints={endpoints.items} onReplayed={list.reload} /> : null}
      {shown ? (
        <DeliveryDetailDialog
          deliveryId={shown}
          endpointUrl={urlOf.get(list.items.find((d) => d.id === shown)?.endpointId ?? '')}
          onClose={() => setShown(undefined)}
          onRetried={list.reload}
        />
      ) : null}
    </PageLayout>
  )
}
