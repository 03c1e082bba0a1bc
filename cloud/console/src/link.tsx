import type { AnchorHTMLAttributes, MouseEvent } from 'react'
import { href, navigate } from './router.js'

type LinkProps = Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'> & { to: string }

/** A real link (it opens in a new tab, it is announced as a link) that navigates in the page. */
export function Link({ to, onClick, ...rest }: LinkProps) {
  const follow = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event)
    if (event.defaultPrevented || event.button !== 0) return
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    event.preventDefault()
    navigate(to)
  }
  return <a href={href(to)} onClick={follow} {...rest} />
}
