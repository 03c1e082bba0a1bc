import { spawn } from 'node:child_process'

/**
 * Runs a system program (systemctl, journalctl, useradd, sc) with this terminal as its output, as
 * a shell would, and resolves to its exit status; 127 when it cannot be started (not installed),
 * as a shell says.
 */
export type RunProgram = (program: string, args: readonly string[]) => Promise<number>

export const runProgram: RunProgram = (program, args) =>
  new Promise((resolve) => {
    const child = spawn(program, args, { stdio: 'inherit' })
    child.once('error', (err) => {
      process.stderr.write(`hajri-agent: cannot run ${program}: ${err.message}\n`)
      resolve(127)
    })
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)))
  })
