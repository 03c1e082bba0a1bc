import { parseArgs } from 'node:util'
import { agentJsonSchema } from '../config/json-schema.js'
import { type AgentCommand, AgentUsageError } from './agent-command.js'

/**
 * `hajri-agent schema`: prints the configuration's JSON Schema. deploy/agent.schema.json is this
 * output, and a test keeps it so (test/agent/commands/schema-command.test.ts).
 */
export const schemaCommand: AgentCommand = async (args, io) => {
  const { positionals } = parseArgs({ args: [...args], options: {}, allowPositionals: true, strict: true })
  if (positionals.length > 0) throw new AgentUsageError(`schema takes no operand (got "${positionals[0]}")`)
  io.stdout(`${JSON.stringify(agentJsonSchema(), null, 2)}\n`)
  return 0
}
