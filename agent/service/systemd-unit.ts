import { SERVICE_NAME, SERVICE_NODE_FLAGS, type ServicePlan } from './service-manager.js'

/**
 * The systemd unit `hajri-agent service install` writes (docs/decisions/0086-agent-package.md):
 * deploy/hajri-agent.service with the installed package's paths. The same user, restart policy,
 * heap flags and sandboxing; what differs is taken from the plan: ExecStartPre and ExecStart run the
 * package's own node and main.js on the chosen configuration file, and ReadWritePaths is that file's
 * spool.dir. test/agent/service/systemd-unit.test.ts holds the two units to the same settings.
 */
export function renderSystemdUnit(plan: ServicePlan): string {
  const node = quoteExecArg(plan.nodePath)
  const main = quoteExecArg(plan.mainPath)
  const config = quoteExecArg(plan.configPath)
  // StateDirectory= makes /var/lib/hajri-agent, owned by the service user, at every start: the
  // default spool lives there. Another spool.dir is made by `service install` itself.
  const stateDirectory = isWithin(plan.spoolDir, STATE_DIR)
    ? ['StateDirectory=hajri-agent', 'StateDirectoryMode=0750']
    : []
  const configurationDirectory = isWithin(plan.configPath, '/etc/hajri')
    ? ['ConfigurationDirectory=hajri']
    : []
  // ProtectHome=true hides /home, /root and /run/user: a node installed there (nvm) or a
  // configuration kept there could not be read at all. read-only keeps them readable.
  const protectHome = [plan.nodePath, plan.mainPath, plan.configPath].some(isUnderHome) ? 'read-only' : 'true'
  return `# Written by \`hajri-agent service install\` (docs/site-agent/install.md); changes here are
# lost at the next install. Remove it with \`hajri-agent service uninstall\`.
[Unit]
Description=Hajri site agent (biometric devices to Hajri)
# The embedded MQTT broker listens on the network. A serial port that is not there yet is reopened
# with backoff until it appears, so no ordering after udev.
After=network-online.target
Wants=network-online.target
# Always come back (Restart=always below), however often it fails: no start rate limit.
StartLimitIntervalSec=0

[Service]
Type=simple
User=${SERVICE_USER}
Group=${SERVICE_USER}
SupplementaryGroups=dialout
# A configuration file with a mistake stops the start here, and check-config's one line per wrong
# field is in the journal (hajri-agent service logs).
ExecStartPre=${node} ${main} check-config --config ${config}
# Heap flags as in deploy/hajri-agent.service: peak RSS <= 150 MB while a backlog drains.
ExecStart=${node} ${SERVICE_NODE_FLAGS.join(' ')} ${main} run --config ${config}
# Punches already acknowledged are on disk; SIGTERM lets in-flight work finish first.
KillSignal=SIGTERM
TimeoutStopSec=30
# Always come back: a crash, an OOM kill or a killed process must not leave devices unheard.
Restart=always
RestartSec=2
${[...stateDirectory, ...configurationDirectory].map((line) => `${line}\n`).join('')}
# Sandboxing: the agent reads its config and secrets, writes its spool, opens serial ports and
# sockets, and nothing else.
NoNewPrivileges=true
ProtectSystem=strict
ProtectHome=${protectHome}
PrivateTmp=true
ReadWritePaths=${quotePath(plan.spoolDir)}
ProtectKernelTunables=true
ProtectKernelModules=true
ProtectKernelLogs=true
ProtectControlGroups=true
ProtectClock=true
ProtectHostname=true
RestrictNamespaces=true
RestrictRealtime=true
RestrictSUIDSGID=true
LockPersonality=true
# V8's JIT writes machine code to memory it then runs: MemoryDenyWriteExecute=true would kill node.
MemoryDenyWriteExecute=false
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK
SystemCallArchitectures=native
CapabilityBoundingSet=

[Install]
WantedBy=multi-user.target
`
}

/** The system user the service runs as (created by `service install` when missing). */
export const SERVICE_USER = 'hajri'

/** Where systemd keeps the state directory of StateDirectory=hajri-agent. */
export const STATE_DIR = `/var/lib/${SERVICE_NAME}`

/** Where `service install` writes the unit, under `/` or the --root directory. */
export const UNIT_PATH = `/etc/systemd/system/${SERVICE_NAME}.service`

function isWithin(path: string, dir: string): boolean {
  return path === dir || path.startsWith(`${dir}/`)
}

function isUnderHome(path: string): boolean {
  return ['/home', '/root', '/run/user'].some((dir) => isWithin(path, dir))
}

/**
 * One word of an Exec line (systemd.service(5), "Command lines"): quoted when it holds a space, a
 * quote, a backslash or a `$`/`%` (specifiers and variables would otherwise be expanded).
 */
export function quoteExecArg(word: string): string {
  const escaped = word.replaceAll('%', '%%').replaceAll('$', '$$')
  if (!/[\s"'\\]/.test(escaped)) return escaped
  return `"${escaped.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`
}

/** A path in a list setting (ReadWritePaths=): specifiers escaped, quoted when it holds a space. */
function quotePath(path: string): string {
  const escaped = path.replaceAll('%', '%%')
  return /[\s"'\\]/.test(escaped) ? `"${escaped.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"` : escaped
}
