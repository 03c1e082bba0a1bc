/** Who acted, and from where: passed down from the CLI, the console or an HTTP request. */
export interface Actor {
  /** `cli:<os user>`, `console:<user id>`, `oauth_app:<app id>`. */
  name: string
  ip: string | null
}
