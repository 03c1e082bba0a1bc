export interface Bar {
  /** Under the bar (short: "09", "Mon"). */
  label: string
  /** In the bar's tooltip and the table ("21 Nov, 09:00–10:00"). */
  longLabel: string
  /** Null: nothing to show for this bar (not zero). */
  value: number | null
}

interface BarChartProps {
  title: string
  /** One sentence a screen reader gives instead of the picture. */
  summary: string
  bars: Bar[]
  /** Formats a value for the axis, tooltips and table ("42", "97%"). */
  format: (value: number) => string
  /** The top of the axis; by default a round number above the largest value. */
  max?: number
  valueHeading: string
  /** Counts: no axis line at a fraction. */
  whole?: boolean
}

const WIDTH = 640
const HEIGHT = 220
const LEFT = 56
const BOTTOM = 24
const TOP = 10

/** A round number at or above `value`: 1, 2, 5 × 10ⁿ. */
function niceCeiling(value: number): number {
  if (value <= 0) return 1
  const power = 10 ** Math.floor(Math.log10(value))
  for (const step of [1, 2, 5, 10]) if (value <= step * power) return step * power
  return 10 * power
}

/**
 * A bar chart in plain SVG: a picture with a title and summary for screen readers, a tooltip on each
 * bar, and the same numbers as a table for anyone who wants them exactly.
 */
export function BarChart({ title, summary, bars, format, max, valueHeading, whole }: BarChartProps) {
  const top = max ?? niceCeiling(Math.max(0, ...bars.map((b) => b.value ?? 0)))
  const plotWidth = WIDTH - LEFT - 8
  const plotHeight = HEIGHT - TOP - BOTTOM
  const slot = plotWidth / Math.max(1, bars.length)
  const labelEvery = Math.ceil(bars.length / 12)
  const y = (value: number) => TOP + plotHeight - (value / top) * plotHeight
  const ticks = [0, top / 2, top].filter((t) => !whole || Number.isInteger(t))

  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" preserveAspectRatio="xMidYMid meet">
        <title>{summary}</title>
        {ticks.map((t) => (
          <g key={t}>
            <line className="chart-grid" x1={LEFT} x2={WIDTH - 8} y1={y(t)} y2={y(t)} />
            <text className="chart-axis" x={LEFT - 6} y={y(t) + 4} textAnchor="end">
              {format(t)}
            </text>
          </g>
        ))}
        {bars.map((bar, i) => {
          const x = LEFT + i * slot + slot * 0.15
          const height = bar.value === null ? 0 : (bar.value / top) * plotHeight
          return (
            <g key={bar.longLabel}>
              {bar.value === null ? null : (
                <rect
                  className="chart-bar"
                  x={x}
                  y={y(bar.value)}
                  width={slot * 0.7}
                  height={Math.max(height, 1)}
                >
                  <title>{`${bar.longLabel}: ${format(bar.value)}`}</title>
                </rect>
              )}
              {i % labelEvery === 0 ? (
                <text className="chart-axis" x={x + slot * 0.35} y={HEIGHT - 6} textAnchor="middle">
                  {bar.label}
                </text>
              ) : null}
            </g>
          )
        })}
      </svg>
      <details>
        <summary>Show the numbers</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">{valueHeading}</th>
            </tr>
          </thead>
          <tbody>
            {bars.map((bar) => (
              <tr key={bar.longLabel}>
                <td>{bar.longLabel}</td>
                <td>{bar.value === null ? 'No data' : format(bar.value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  )
}
