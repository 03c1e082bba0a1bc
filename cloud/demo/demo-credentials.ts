import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'

/**
 * What `npm start` made for the demo, kept in `demo-credentials.json` beside the database (the
 * credentials are also written to ./data/demo-credentials.json). Secrets are shown once by
 * the cloud, so this file is the only place the demo can find them again on the next run: it is
 * written after every seeding step (a run stopped halfway resumes where it was), atomically, and
 * readable only by its owner.
 */
export interface DemoCredentials {
  tenant: { id: string; name: string }
  /** The console owner. `oneTimePassword` works until they choose their own at the first sign-in. */
  owner: { email: string; oneTimePassword: string | null }
  /** The OAuth app the demo's agent signs in with (client credentials). */
  agent?: { appId: string; clientId: string; clientSecret: string } | undefined
  /** The key an HR backend would use. */
  apiKey?: { id: string; key: string } | undefined
  /** Where things were on the last run: what the banner printed (ports can be changed between runs). */
  urls?:
    | {
        console: string
        api: string
        docs: string
        mqtt: string
        punchTopic: string
        agentStatus: string
      }
    | undefined
}

export const DEMO_CREDENTIALS_FILE = 'demo-credentials.json'

/**
 * The file's content, or undefined when there is none. A file that is not what we write (edited by
 * hand, truncated by a full disk) is reported through `onUnreadable` and treated as absent: the
 * demo then finds its tenant by the owner's email, so nothing is lost but the one-time secrets.
 */
export async function readDemoCredentials(
  path: string,
  onUnreadable: (reason: string) => void,
): Promise<DemoCredentials | undefined> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    onUnreadable(`not JSON (${(err as Error).message})`)
    return undefined
  }
  if (!isDemoCredentials(value)) {
    onUnreadable('not in the form npm start writes')
    return undefined
  }
  return value
}

/** Written to a temporary file, then renamed over the old one: a crash leaves the old file or the new one. */
export async function writeDemoCredentials(path: string, credentials: DemoCredentials): Promise<void> {
  await mkdir(dirname(path), { recursive: true })
  const temporary = `${path}.${process.pid}.tmp`
  await writeFile(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 })
  // The mode given to writeFile is masked by the umask; secrets must not be readable by others.
  await chmod(temporary, 0o600)
  await rename(temporary, path)
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null
const isString = (v: unknown): v is string => typeof v === 'string' && v !== ''

function isDemoCredentials(v: unknown): v is DemoCredentials {
  if (!isObject(v) || !isObject(v.tenant) || !isObject(v.owner)) return false
  if (!isString(v.tenant.id) || !isString(v.owner.email)) return false
  if (v.owner.oneTimePassword !== null && !isString(v.owner.oneTimePassword)) return false
  if (v.agent !== undefined) {
    const a = v.agent
    if (!isObject(a) || !isString(a.appId) || !isString(a.clientId) || !isString(a.clientSecret)) return false
  }
  if (v.apiKey !== undefined) {
    const k = v.apiKey
    if (!isObject(k) || !isString(k.id) || !isString(k.key)) return false
  }
  return true
}
