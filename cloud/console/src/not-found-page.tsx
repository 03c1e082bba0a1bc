import { Link } from './link.js'

/** A console address that names no page. */
export function NotFoundPage() {
  return (
    <section>
      <h1 tabIndex={-1}>Page not found</h1>
      <p>
        There is no console page at this address. Go to the <Link to="/">dashboard</Link>, or pick a page from
        the navigation above.
      </p>
    </section>
  )
}
