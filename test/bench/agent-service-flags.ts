import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const UNIT = fileURLToPath(new URL('../../deploy/hajri-agent.service', import.meta.url))

/**
 * The node flags deploy/hajri-agent.service starts the agent with: the words of its ExecStart=
 * between the node binary and the script. The agent benchmarks run the agent with these by
 * default, so that their RSS is the one a site gets from the unit as shipped (the goal: peak RSS
 * while draining).
 */
export function serviceNodeFlags(unitFile = UNIT): string[] {
  const line = /^ExecStart=(.+)$/m.exec(readFileSync(unitFile, 'utf8'))
  if (!line) throw new Error(`${unitFile} has no ExecStart= line`)
  const words = (line[1] as string).trim().split(/\s+/)
  const script = words.findIndex((word) => word.endsWith('.js'))
  if (script < 1) throw new Error(`the ExecStart= of ${unitFile} names no script to run with node`)
  return words.slice(1, script)
}
