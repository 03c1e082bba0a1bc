/**
 * Just enough of the Dockerfile syntax to check deploy/Dockerfile without a Docker daemon:
 * comments, `\` line continuations, stages (FROM ... AS name), and exec-form (JSON) arguments.
 * https://docs.docker.com/reference/dockerfile/#format
 */

export interface Instruction {
  /** Upper case: FROM, RUN, COPY, ... */
  keyword: string
  /** Everything after the keyword, continuation lines joined. */
  args: string
  line: number
}

export interface Stage {
  name: string | undefined
  base: string
  instructions: Instruction[]
}

export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = []
  const lines = text.split('\n')
  let pending: { text: string; line: number } | undefined
  const finish = (instruction: { text: string; line: number }) => {
    const match = /^(\S+)\s*(.*)$/s.exec(instruction.text.trim())
    if (!match) return
    const keyword = (match[1] as string).toUpperCase()
    const args = (match[2] as string).trim()
    if (keyword === 'FROM') {
      const from = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args)
      if (!from) throw new Error(`line ${instruction.line}: cannot read FROM ${args}`)
      stages.push({ base: from[1] as string, name: from[2], instructions: [] })
      return
    }
    const stage = stages.at(-1)
    if (!stage) throw new Error(`line ${instruction.line}: ${keyword} before any FROM`)
    stage.instructions.push({ keyword, args, line: instruction.line })
  }
  lines.forEach((raw, index) => {
    const line = raw.replace(/\r$/, '')
    // Comment lines are dropped, even in the middle of a continued instruction.
    if (/^\s*#/.test(line)) return
    if (pending === undefined && line.trim() === '') return
    const continued = /\\\s*$/.test(line)
    const part = continued ? line.replace(/\\\s*$/, '') : line
    pending = pending
      ? { ...pending, text: `${pending.text} ${part.trim()}` }
      : { text: part, line: index + 1 }
    if (!continued) {
      finish(pending)
      pending = undefined
    }
  })
  if (pending) finish(pending)
  return stages
}

/** The exec form of CMD, ENTRYPOINT or HEALTHCHECK CMD: a JSON array of strings. */
export function execForm(args: string): string[] {
  const parsed: unknown = JSON.parse(args)
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string'))
    throw new Error(`not an exec form (JSON array of strings): ${args}`)
  return parsed
}

/** ENV's `KEY=value` pairs (values without spaces or quotes, which is all deploy/Dockerfile uses). */
export function envPairs(args: string): Record<string, string> {
  const env: Record<string, string> = {}
  for (const pair of args.split(/\s+/)) {
    const eq = pair.indexOf('=')
    if (eq <= 0) throw new Error(`ENV without KEY=value: ${args}`)
    env[pair.slice(0, eq)] = pair.slice(eq + 1)
  }
  return env
}

export interface CopyInstruction {
  /** The stage copied from, or undefined for the build context. */
  from: string | undefined
  sources: string[]
  destination: string
}

export function copyInstruction(args: string): CopyInstruction {
  const words = args.split(/\s+/)
  let from: string | undefined
  const paths: string[] = []
  for (const word of words) {
    const option = /^--([a-z-]+)(?:=(.*))?$/.exec(word)
    if (option) {
      if (option[1] === 'from') from = option[2]
      continue
    }
    paths.push(word)
  }
  if (paths.length < 2) throw new Error(`COPY needs a source and a destination: ${args}`)
  return { from, sources: paths.slice(0, -1), destination: paths.at(-1) as string }
}
