import { useSyncExternalStore } from 'react'

/** Where the console is served (cloud/plugins/static-console.ts, vite.config.ts `base`). */
const BASE = '/console'

const CHANGE = 'hajri:navigate'

function subscribe(onChange: () => void): () => void {
  window.addEventListener('popstate', onChange)
  window.addEventListener(CHANGE, onChange)
  return () => {
    window.removeEventListener('popstate', onChange)
    window.removeEventListener(CHANGE, onChange)
  }
}

const snapshot = () => window.location.pathname + window.location.search

/** The console path (`/keys`) and its query, from the address bar. */
export function useLocation(): { path: string; search: URLSearchParams } {
  const current = useSyncExternalStore(subscribe, snapshot)
  const url = new URL(current, window.location.origin)
  let path = url.pathname.startsWith(BASE) ? url.pathname.slice(BASE.length) : url.pathname
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1)
  return { path: path === '' ? '/' : path, search: url.searchParams }
}

/** The address of a console path, for links. */
export function href(to: string): string {
  return to === '/' ? `${BASE}/` : BASE + to
}

/** Goes to a console path (`/deliveries?status=failed`) without reloading the page. */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace) window.history.replaceState(null, '', href(to))
  else window.history.pushState(null, '', href(to))
  window.dispatchEvent(new Event(CHANGE))
}
