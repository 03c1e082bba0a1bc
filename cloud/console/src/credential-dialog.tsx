import { type ReactNode, useState } from 'react'
import type { Scope } from './api-types.js'
import { FormDialog, type FormDialogTexts } from './form-dialog.js'
import { RateLimitField } from './rate-limit-field.js'
import { ScopePicker } from './scope-picker.js'
import { TextField } from './text-field.js'
import { useSubmit } from './use-submit.js'

/** What every credential is made with: a name, its scopes and its rate limit. */
export interface CredentialFields {
  name: string
  scopes: Scope[]
  rateLimitPerMinute: number
}

interface CredentialDialogProps<T> extends FormDialogTexts {
  /** "key" or "app": what the credential is called in the messages. */
  noun: string
  /** Which system uses it, with an example. */
  nameHint: string
  /** Checked at first: what such a credential is most often for. */
  initialScope: Scope
  /** Fields of this kind of credential alone, between the scopes and the rate limit. */
  children?: ReactNode
  create: (fields: CredentialFields) => Promise<T>
  /** With what the server answered, the secret in it to show once. */
  onCreated: (created: T) => void
}

/** Creates an API key or an OAuth app: a name, at least one scope, and a rate limit. */
export function CredentialDialog<T>({
  noun,
  nameHint,
  initialScope,
  children,
  create,
  onCreated,
  ...dialog
}: CredentialDialogProps<T>) {
  const [name, setName] = useState('')
  const [scopes, setScopes] = useState<Scope[]>([initialScope])
  const [limit, setLimit] = useState('600')
  const submission = useSubmit(
    async () => onCreated(await create({ name: name.trim(), scopes, rateLimitPerMinute: Number(limit) })),
    () => (scopes.length === 0 ? `Choose at least one scope: what the ${noun} may do.` : undefined),
  )

  return (
    <FormDialog {...dialog} submission={submission} busyLabel="Creating…">
      <TextField
        label="Name"
        hint={nameHint}
        required
        maxLength={100}
        value={name}
        onChange={setName}
        data-initial-focus
      />
      <ScopePicker selected={scopes} onChange={setScopes} />
      {children}
      <RateLimitField value={limit} onChange={setLimit} />
    </FormDialog>
  )
}
