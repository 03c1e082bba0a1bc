#!/usr/bin/env node
import { realpath } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { type AgentCommand, type AgentIo, AgentUsageError } from './commands/agent-command.js'

export const USAGE = `hajri-agent: reads biometric devices and forwards their punches to Hajri

Usage:
  hajri-agent run --config agent.yaml            run the agent
  hajri-agent check-config --config agent.yaml   check a configuration file (exit 2 on errors)
  hajri-agent doctor --config agent.yaml [--json] check the cloud, clock, devices, spool and ports
  hajri-agent status [--url http://127.0.0.1:9410] [--json]
  hajri-agent dead-letters list [--reason R] [--device D] [--json]
  hajri-agent dead-letters replay [--reason R] [--device D]
  hajri-agent dead-letters export [--format json|csv]
      (through the running agent; with --spool DIR, from a stopped agent's spool directory)
  hajri-agent devices backfill DEVICE --from 2026-11-01 --to 2026-11-20 [--json]
      ask a push (ADMS) terminal to upload its records of that period again; nothing on it changes
  hajri-agent devices set-time DEVICE [--json]
      set a ZK terminal's clock from this machine's
  hajri-agent devices clear-log DEVICE [--accept-dead-letters] [--json]
      delete a ZK terminal's attendance log, only once every punch of it is in the cloud
      (replay and the devices commands are changes: they send the agent's control token, read
      from spool.dir of --config agent.yaml, default /etc/hajri/agent.yaml, or --token-file FILE)
  hajri-agent schema                             print the configuration's JSON Schema
  hajri-agent --version                          print this agent's version (also -v)
  hajri-agent service install --config agent.yaml [--print] [--root DIR]
      run the agent as this machine's service (systemd, or Windows), this package's node and
      main.js on that file, checked first; --print shows the unit and changes nothing
  hajri-agent service uninstall | status | logs [--lines N] [--follow]
  hajri-agent simulate (--mqtt URL [--topic T] [--username U] [--password-file F]
                        | --serial PATH [--baud-rate 9600]
                        | --adms http://HOST:PORT --serial-number SN
                        | --zk-device PORT [--host H] [--record-size 40|16|8] [--comm-key N]
                          [--serial-number SN] [--records N] [--exit-after-count])
                       [--format json|zk-attlog|csv] [--employees E001,E002,...] [--count N]
                       [--every DURATION | --rate N] [--time-zone Asia/Kolkata] [--json]
      act as a punch device, for demos and load tests: one punch, N with --count, or until
      Ctrl-C with --every 20s (a demo) or --rate 500 (punches a second, a load test); --adms is a
      ZKTeco/eSSL terminal pushing to the agent's ADMS listener (a punch counts on its "OK: n");
      --zk-device is a ZK terminal on PORT that an agent's zk device reads

See deploy/agent.example.yaml for every setting.`

/**
 * Commands by name ("group sub" for two-word commands), loaded when run: `status` stays quick
 * because it loads no broker, serial or spool code.
 */
export const AGENT_COMMANDS: Record<string, () => Promise<AgentCommand>> = {
  run: async () => (await import('./commands/run-command.js')).runCommand,
  'check-config': async () => (await import('./commands/check-config-command.js')).checkConfigCommand,
  doctor: async () => (await import('./commands/doctor-command.js')).doctorCommand,
  schema: async () => (await import('./commands/schema-command.js')).schemaCommand,
  simulate: async () => (await import('./commands/simulate-command.js')).simulateCommand,
  status: async () => (await import('./commands/status-command.js')).statusCommand,
  'dead-letters list': async () =>
    (await import('./commands/dead-letters-command.js')).deadLettersListCommand,
  'dead-letters replay': async () =>
    (await import('./commands/dead-letters-command.js')).deadLettersReplayCommand,
  'dead-letters export': async () =>
    (await import('./commands/dead-letters-command.js')).deadLettersExportCommand,
  'devices backfill': async () => (await import('./commands/devices-command.js')).devicesBackfillCommand,
  'devices set-time': async () => (await import('./commands/devices-command.js')).devicesSetTimeCommand,
  'devices clear-log': async () => (await import('./commands/devices-command.js')).devicesClearLogCommand,
  'service install': async () => (await import('./commands/service-command.js')).serviceInstallCommand,
  'service uninstall': async () => (await import('./commands/service-command.js')).serviceUninstallCommand,
  'service status': async () => (await import('./commands/service-command.js')).serviceStatusCommand,
  'service logs': async () => (await import('./commands/service-command.js')).serviceLogsCommand,
}

export async function runAgentCli(argv: readonly string[], io: AgentIo): Promise<number> {
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(`${USAGE}\n`)
    return 0
  }
  if (name === '--version' || name === '-v') {
    io.stdout(`${(await import('./agent-version.js')).agentVersion()}\n`)
    return 0
  }
  const sub = rest[0]
  const load = AGENT_COMMANDS[`${name} ${sub}`] ?? AGENT_COMMANDS[name]
  if (!load) {
    io.stderr(`hajri-agent: unknown command "${argv.join(' ')}"\n\n${USAGE}\n`)
    return 2
  }
  const args = AGENT_COMMANDS[`${name} ${sub}`] ? rest.slice(1) : rest
  try {
    return await (await load())(args, io)
  } catch (err) {
    if (err instanceof AgentUsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.stderr(`hajri-agent: ${(err as Error).message}\n\n${USAGE}\n`)
      return 2
    }
    io.stderr(`hajri-agent: ${err instanceof Error ? err.message : String(err)}\n`)
    return 1
  }
}

async function isEntryPoint(): Promise<boolean> {
  const script = process.argv[1]
  if (!script) return false
  return (await realpath(script).catch(() => script)) === fileURLToPath(import.meta.url)
}

if (await isEntryPoint()) {
  process.exitCode = await runAgentCli(process.argv.slice(2), {
    env: process.env,
    cwd: process.cwd(),
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    isTty: process.stdout.isTTY === true,
  })
}
