import type { ReactNode } from 'react'

export type NoticeKind = 'error' | 'success' | 'info'

/**
 * A message after an action. Errors are alerts (read out at once); the rest are polite status
 * messages. The region is always in the page so that screen readers announce what appears in it.
 */
export function Notice({ kind, children }: { kind: NoticeKind; children: ReactNode }) {
  return (
    <div className={`notice notice-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  )
}
