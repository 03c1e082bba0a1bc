#!/usr/bin/env node
/**
 * hajri-agent: the on-premise gateway that reads biometric devices and forwards their punches
 * (DESIGN.md §5). Its commands (run, check-config, status, dead-letters) arrive with issue 4; until
 * then this entry point says so plainly rather than pretending to work.
 */
const USAGE = `hajri-agent: the Hajri site agent

The agent is not built yet: its commands (run, check-config, status, dead-letters)
arrive in a later release. Until then, send punches to the cloud API directly
(POST /api/public/v1/attendance/punches); see the README.`

const args = process.argv.slice(2)
if (args.length === 0 || args.includes('--help') || args.includes('-h')) {
  process.stdout.write(`${USAGE}\n`)
} else {
  process.stderr.write(`hajri-agent: "${args.join(' ')}" is not available yet\n\n${USAGE}\n`)
  process.exitCode = 2
}
