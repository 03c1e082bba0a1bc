import type { OwnerPassword } from './demo-seed.js'

export interface BannerInput {
  /** `./data`. */
  dataDir: string
  /** `data/demo-credentials.json`. */
  credentialsFile: string
  /** `http://127.0.0.1:8080`. */
  cloudUrl: string
  ownerEmail: string
  owner: OwnerPassword
  /** The command that gives the owner a new one-time password. */
  resetPasswordCommand: string
  apiKey: string
  punchCommand: string
  /** `E001, E002 and E003`, every `20s`. */
  simulated: { employees: readonly string[]; every: string }
}

function list(items: readonly string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`
}

function consoleLogin(input: BannerInput): string[] {
  const login = `${input.ownerEmail} / `
  switch (input.owner.kind) {
    case 'one-time':
      return [`${login}${input.owner.password}   (you choose your own at the first sign-in)`]
    case 'chosen':
      return [`${login}the password you set at first sign-in`, `forgot it? ${input.resetPasswordCommand}`]
    case 'unknown':
      return [`${login}a password this demo does not know; a new one-time one:`, input.resetPasswordCommand]
  }
}

/**
 * What `npm start` prints once everything runs: where to look, how to log in, what to try
 * (docs/decisions/0059-npm-start-is-a-demo.md).
 */
export function demoBanner(input: BannerInput): string {
  const api = `${input.cloudUrl}/api/public/v1`
  const bearer = `-H "Authorization: Bearer ${input.apiKey}"`
  const [login, ...more] = consoleLogin(input)
  const rows: [string, string][] = [
    ['Console', `${input.cloudUrl}/console/   ${login}`],
    ...more.map((line): [string, string] => ['', line]),
    ['API key', input.apiKey],
    ['Employees', `curl ${bearer} ${api}/employees`],
    ['Punch', input.punchCommand],
    ['Punches', `curl ${bearer} ${api}/attendance/punches`],
    ['API docs', `${input.cloudUrl}/docs`],
  ]
  return [
    `Hajri demo is running (data in ${input.dataDir}; Ctrl-C stops it)`,
    ...rows.map(([label, value]) => `  ${label.padEnd(9)} ${value}`),
    `A simulated device punches ${list(input.simulated.employees)} every ${input.simulated.every}; the agent forwards them.`,
    `Credentials are also in ${input.credentialsFile}.`,
    '',
  ].join('\n')
}
