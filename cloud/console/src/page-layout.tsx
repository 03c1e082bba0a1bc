import type { ReactNode } from 'react'

interface PageLayoutProps {
  /** The page's heading: the shell moves the focus to it when the page opens. */
  title: string
  /** Beside the heading: the page's main button, if it has one. */
  actions?: ReactNode
  /** What the page is for, under the heading. */
  lead: ReactNode
  children: ReactNode
}

/** A console page: its heading with its main action, a lead paragraph, then the content. */
export function PageLayout({ title, actions, lead, children }: PageLayoutProps) {
  return (
    <section>
      <div className="page-header">
        <h1 tabIndex={-1}>{title}</h1>
        {actions}
      </div>
      <p className="lead">{lead}</p>
      {children}
    </section>
  )
}
