import { Link } from './link.js'
import { Notice, type NoticeKind } from './notice.js'

/** What the last action on a page said: that it worked, or why it did not. */
export interface NoticeText {
  kind: NoticeKind
  text: string
  /** Where to see more of what it did ("See its deliveries"). */
  link?: { to: string; label: string }
}

/** The last action's notice, when there is one. */
export function LastNotice({ notice }: { notice: NoticeText | undefined }) {
  if (!notice) return null
  return (
    <Notice kind={notice.kind}>
      {notice.text}
      {notice.link ? (
        <>
          {' '}
          <Link to={notice.link.to}>{notice.link.label}</Link>
        </>
      ) : null}
    </Notice>
  )
}
