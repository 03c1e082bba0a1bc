import { useState } from 'react'
import type { NoticeText } from './last-notice.js'
import type { PagedList } from './use-paged-list.js'

export interface ListNotice {
  /** What the last action said (for LastNotice). */
  notice: NoticeText | undefined
  setNotice: (notice: NoticeText | undefined) => void
  /** After a change the server accepted: says so, and loads the list again to show it. */
  changed: (text: string) => void
}

/** A list page's notice: the outcome of the last change made from it. */
export function useListNotice(list: PagedList<unknown>): ListNotice {
  const [notice, setNotice] = useState<NoticeText>()
  const changed = (text: string) => {
    setNotice({ kind: 'success', text })
    list.reload()
  }
  return { notice, setNotice, changed }
}
