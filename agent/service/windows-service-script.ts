import type { ServicePlan } from './service-manager.js'

/**
 * The script node-windows runs as the service (docs/decisions/0086-agent-package.md), written by
 * `service install` next to the daemon directory (windows-service.ts). It does on Windows what the
 * systemd unit's ExecStartPre does: check-config first, and a bad file stops the start with
 * check-config's own lines in the service's error log; then the agent runs in this process, as
 * `hajri-agent run --config FILE`. CommonJS, since node-windows' wrapper starts it with fork().
 */
export function renderWindowsServiceScript(plan: ServicePlan): string {
  const main = JSON.stringify(plan.mainPath)
  const config = JSON.stringify(plan.configPath)
  return `// Written by \`hajri-agent service install\`; changes here are lost at the next install.
'use strict'
const { spawnSync } = require('node:child_process')
const { pathToFileURL } = require('node:url')
const main = ${main}
const config = ${config}
const check = spawnSync(process.execPath, [main, 'check-config', '--config', config], { encoding: 'utf8' })
if (check.status !== 0) {
  process.stderr.write(\`hajri-agent: not started, the configuration has problems:\\n\${check.stderr}\${check.stdout}\`)
  process.exit(check.status === null ? 1 : check.status)
}
// main.js runs a command when it is the process's entry point (argv[1]).
process.argv = [process.argv[0], main, 'run', '--config', config]
import(pathToFileURL(main).href).catch((err) => {
  process.stderr.write(\`hajri-agent: \${err && err.stack ? err.stack : err}\\n\`)
  process.exit(1)
})
`
}
