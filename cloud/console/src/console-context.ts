import { createContext, useContext } from 'react'
import type { ApiClient } from './api-client.js'
import type { ConsoleUser, Session } from './api-types.js'

export interface ConsoleState {
  api: ApiClient
  user: ConsoleUser
  /** The organisation whose console this is. */
  tenant: Session['tenant']
  /** Owners and admins change things; viewers only look (the server refuses them too). */
  canWrite: boolean
}

export const ConsoleContext = createContext<ConsoleState | undefined>(undefined)

/** The signed-in user and the API client, for any page under the shell. */
export function useConsole(): ConsoleState {
  const state = useContext(ConsoleContext)
  if (!state) throw new Error('useConsole outside a signed-in console')
  return state
}
