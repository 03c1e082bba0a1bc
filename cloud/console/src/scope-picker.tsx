import type { Scope } from './api-types.js'
import { SCOPE_TEXT, SCOPES } from './scopes.js'

/** The scopes a key or app gets: at least one, the fewest that do the job. */
export function ScopePicker({
  selected,
  onChange,
}: {
  selected: Scope[]
  onChange: (scopes: Scope[]) => void
}) {
  return (
    <fieldset className="field">
      <legend>Scopes</legend>
      <p className="hint">Give only what the integration needs.</p>
      {SCOPES.map((scope) => (
        <label key={scope} className="choice">
          <input
            type="checkbox"
            checked={selected.includes(scope)}
            onChange={(e) =>
              onChange(e.target.checked ? [...selected, scope] : selected.filter((s) => s !== scope))
            }
          />{' '}
          <code>{scope}</code> <span className="muted">{SCOPE_TEXT[scope]}</span>
        </label>
      ))}
    </fieldset>
  )
}
