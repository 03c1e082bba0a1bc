import { useMemo, useState } from 'react'
import type { AttendanceDay, AttendanceDayDetail, DayPunch } from './api-types.js'
import { ATTENDANCE, DAYS_PAGE_LIMIT, daysCsvHref } from './attendance-api.js'
import { AttendanceDayDialog } from './attendance-day-dialog.js'
import { AttendanceLegend } from './attendance-legend.js'
import { buildMonthGrid, formatMonth, type Month, monthRange } from './attendance-month.js'
import { AttendanceMonthFilters } from './attendance-month-filters.js'
import { AttendanceMonthGrid } from './attendance-month-grid.js'
import { AttendancePunchDialog } from './attendance-punch-dialog.js'
import { timeInDay } from './attendance-time.js'
import { AttendanceVoidDialog } from './attendance-void-dialog.js'
import { EmptyState } from './empty-state.js'
import { ErrorNotice } from './error-notice.js'
import type { NoticeText } from './last-notice.js'
import { ListLoading } from './list-loading.js'
import { usePagedList } from './use-paged-list.js'

type Open =
  | { kind: 'day'; employeeCode: string; workDate: string; notice?: NoticeText }
  | { kind: 'add'; day: AttendanceDayDetail }
  | { kind: 'void'; day: AttendanceDayDetail; punch: DayPunch }

interface AttendanceMonthViewProps {
  month: Month
  employeeCode: string
  /** Changes a filter in the address: `month`, `employeeCode` ('' clears it). */
  onFilter: (name: 'month' | 'employeeCode', value: string) => void
}

/** A month of day records as a grid, a day's detail and corrections, and the month's payroll export. */
export function AttendanceMonthView({ month, employeeCode, onFilter }: AttendanceMonthViewProps) {
  const { from, to } = monthRange(month)
  const list = usePagedList<AttendanceDay>(`${ATTENDANCE}/days`, {
    from,
    to,
    employeeCode,
    limit: DAYS_PAGE_LIMIT,
  })
  const grid = useMemo(
    () => buildMonthGrid(list.items, month, !list.hasMore),
    [list.items, list.hasMore, month],
  )
  const [open, setOpen] = useState<Open>()
  const close = () => setOpen(undefined)
  const backToDay = (day: AttendanceDayDetail, text: string) => {
    list.reload()
    setOpen({
      kind: 'day',
      employeeCode: day.employeeCode,
      workDate: day.workDate,
      notice: { kind: 'success', text },
    })
  }

  return (
    <>
      <AttendanceMonthFilters month={month} employeeCode={employeeCode} onFilter={onFilter} />
      <p className="actions">
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
        <a href={daysCsvHref(from, to, employeeCode)} download>
          Download CSV for {formatMonth(month)}
          {employeeCode ? ` (${employeeCode})` : ''}
        </a>
        <span className="muted">(the payroll export)</span>
      </p>

      <h2>{formatMonth(month)}</h2>
      <ErrorNotice error={list.error} />
      <ListLoading list={list} />
      {list.loaded && list.items.length === 0 ? (
        employeeCode ? (
          <EmptyState title={`No day records for ${employeeCode} in ${formatMonth(month)}`}>
            Check the employee code, or choose another month.
          </EmptyState>
        ) : (
          <EmptyState title={`No day records in ${formatMonth(month)}`}>
            Days are computed from punches as they arrive, and for every working day of an assigned shift.
            Choose another month, or recompute this one under Settings.
          </EmptyState>
        )
      ) : null}
      {grid.rows.length > 0 ? (
        <AttendanceMonthGrid
          grid={grid}
          caption={`Attendance, ${formatMonth(month)}`}
          onOpen={(day) => setOpen({ kind: 'day', employeeCode: day.employeeCode, workDate: day.workDate })}
        />
      ) : null}
      {list.hasMore ? (
        <p>
          <button type="button" onClick={list.loadMore} disabled={list.loading}>
            {list.loading ? 'Loading…' : 'Show more employees'}
          </button>
        </p>
      ) : null}
      {list.items.length > 0 ? <AttendanceLegend /> : null}

      {open?.kind === 'day' ? (
        <AttendanceDayDialog
          employeeCode={open.employeeCode}
          workDate={open.workDate}
          notice={open.notice}
          onClose={close}
          onAddPunch={(day) => setOpen({ kind: 'add', day })}
          onVoid={(day, punch) => setOpen({ kind: 'void', day, punch })}
        />
      ) : null}
      {open?.kind === 'add' ? (
        <AttendancePunchDialog
          employeeCode={open.day.employeeCode}
          workDate={open.day.workDate}
          onClose={() =>
            setOpen({ kind: 'day', employeeCode: open.day.employeeCode, workDate: open.day.workDate })
          }
          onAdded={(punchedAt) =>
            backToDay(
              open.day,
              `Punch added at ${timeInDay(punchedAt, open.day.workDate)}. The day is computed again in a few seconds: refresh to see it.`,
            )
          }
        />
      ) : null}
      {open?.kind === 'void' ? (
        <AttendanceVoidDialog
          employeeCode={open.day.employeeCode}
          workDate={open.day.workDate}
          punch={open.punch}
          onClose={() =>
            setOpen({ kind: 'day', employeeCode: open.day.employeeCode, workDate: open.day.workDate })
          }
          onVoided={() =>
            backToDay(
              open.day,
              `The ${open.punch.punchType} punch at ${timeInDay(open.punch.punchedAt, open.day.workDate)} is void. The day is computed again in a few seconds: refresh to see it.`,
            )
          }
        />
      ) : null}
    </>
  )
}
