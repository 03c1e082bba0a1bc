import { useMemo, useState } from 'react'
import type { WebhookDelivery, WebhookEndpoint } from './api-types.js'
import { useConsole } from './console-context.js'
import { DeliveryDetailDialog } from './delivery-detail-dialog.js'
import { DELIVERY_STATUS_TEXT, DELIVERY_STATUSES } from './delivery-status.js'
import { EmptyState } from './empty-state.js'
import { Field } from './field.js'
import { localInputToRfc3339 } from './format.js'
import { ListLoading } from './list-loading.js'
import { LoadMoreButton } from './load-more-button.js'
import { Notice } from './notice.js'
import { ReplayForm } from './replay-form.js'
import { navigate, useLocation } from './router.js'
import { StatusBadge } from './status-badge.js'
import { TimeText } from './time-text.js'
import { useEventCatalog } from './use-event-catalog.js'
import { usePagedList } from './use-paged-list.js'

const FILTERS = ['endpointId', 'status', 'eventType', 'from', 'to'] as const
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

  return (
    <section>
      <div className="page-header">
        <h1 tabIndex={-1}>Webhook deliveries</h1>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </div>
      <p className="lead">
        Every event sent to your endpoints, newest first, with each attempt and what the endpoint answered. A
        delivery that fails is retried automatically for about a day and a half.
      </p>
      <form className="filters" aria-label="Filter deliveries" onSubmit={(e) => e.preventDefault()}>
        <Field label="Endpoint">
          <select value={filters.endpointId} onChange={(e) => setFilter('endpointId', e.target.value)}>
            <option value="">All endpoints</option>
            {/* The filter holds from the address at once; the endpoints' URLs come a moment later. */}
            {filters.endpointId !== '' && !urlOf.has(filters.endpointId) && (
              <option value={filters.endpointId}>{filters.endpointId}</option>
            )}
            {endpoints.items.map((e) => (
              <option key={e.id} value={e.id}>
                {e.url}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Status">
          <select value={filters.status} onChange={(e) => setFilter('status', e.target.value)}>
            <option value="">Any status</option>
            {DELIVERY_STATUSES.map((s) => (
              <option key={s} value={s}>
                {DELIVERY_STATUS_TEXT[s]}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Event">
          <select value={filters.eventType} onChange={(e) => setFilter('eventType', e.target.value)}>
            <option value="">Any event</option>
            {catalog.map((t) => (
              <option key={t.type} value={t.type}>
                {t.type}
              </option>
            ))}
          </select>
        </Field>
        <Field label="From">
          <input
            type="datetime-local"
            value={filters.from}
            onChange={(e) => setFilter('from', e.target.value)}
          />
        </Field>
        <Field label="Until">
          <input type="datetime-local" value={filters.to} onChange={(e) => setFilter('to', e.target.value)} />
        </Field>
        {filtered ? (
          <button
            type="button"
            className="button-link"
            onClick={() => navigate('/deliveries', { replace: true })}
          >
            Clear filters
          </button>
        ) : null}
      </form>

      {list.error ? <Notice kind="error">{list.error}</Notice> : null}
      <ListLoading list={list} />
      {list.loaded && list.items.length === 0 ? (
        <EmptyState title={filtered ? 'No delivery matches these filters' : 'No deliveries yet'}>
          {filtered
            ? 'Change or clear the filters to see more.'
            : 'Deliveries appear here when an event is sent to one of your webhook endpoints. Send a test event from the Webhooks page to see one.'}
        </EmptyState>
      ) : null}
      {list.items.length > 0 ? (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Deliveries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">Event</th>
                <th scope="col">Endpoint</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Next attempt</th>
                <th scope="col">
                  <span className="visually-hidden">Details</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.items.map((d) => (
                <tr key={d.id}>
                  <td>
                    <TimeText value={d.createdAt} />
                  </td>
                  <td>
                    <code>{d.eventType}</code>
                  </td>
                  <td className="url">{urlOf.get(d.endpointId) ?? d.endpointId}</td>
                  <td>
                    <StatusBadge status={d.status} label={DELIVERY_STATUS_TEXT[d.status]} />
                  </td>
                  <td>{d.attempts}</td>
                  <td>
                    <TimeText value={d.nextAttemptAt} empty="None" />
                  </td>
                  <td>
                    <button
                      type="button"
                      onClick={() => setShown(d.id)}
                      aria-label={`Details of delivery ${d.id}`}
                    >
                      Details
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <LoadMoreButton list={list} />

      {canWrite ? <ReplayForm endpoints={endpoints.items} onReplayed={list.reload} /> : null}
      {shown ? (
        <DeliveryDetailDialog
          deliveryId={shown}
          endpointUrl={urlOf.get(list.items.find((d) => d.id === shown)?.endpointId ?? '')}
          onClose={() => setShown(undefined)}
          onRetried={list.reload}
        />
      ) : null}
    </section>
  )
}
