import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

/**
 * What Linux says a process has used, read from /proc: CPU time of all its threads (libuv's pool
 * and V8's helpers included, which process.cpuUsage inside the child would also count, but which
 * the parent can read without the child's help) and its resident memory.
 */

function clockTicksPerSecond(): number {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())
    return Number.isFinite(ticks) && ticks > 0 ? ticks : 100
  } catch {
    return 100 // USER_HZ on every mainstream Linux build
  }
}

let ticksPerSecond: number | undefined

/** The agent benchmarks read /proc; elsewhere they fail with this reason rather than report nonsense. */
export function requireProcfs(): void {
  if (process.platform !== 'linux')
    throw new Error(`the agent benchmarks read /proc (Linux), not ${process.platform}`)
}

/** User + system CPU seconds the process has used so far (/proc/<pid>/stat utime + stime). */
export function cpuSeconds(pid: number): number {
  ticksPerSecond ??= clockTicksPerSecond()
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // Fields 14 and 15 of proc(5) are the 12th and 13th after the name.
  const utime = Number(fields[11])
  const stime = Number(fields[12])
  return (utime + stime) / ticksPerSecond
}

/**
 * Resident memory now and at its highest since the process started (VmRSS and VmHWM of
 * /proc/<pid>/status), in MB of 10^6 bytes: the unit of the goal "peak RSS <= 150 MB", read the
 * strict way (150 MB is 143 MiB).
 */
export function memoryMB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const mb = (name: string) => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status)
    if (!m) throw new Error(`no ${name} in /proc/${pid}/status`)
    return (Number(m[1]) * 1024) / 1e6
  }
  return { rss: mb('VmRSS'), peak: mb('VmHWM') }
}

/**
 * Seconds the process' main thread (its event loop) has spent on a CPU, and runnable but waiting
 * for one (/proc/<pid>/task/<pid>/schedstat); undefined where the kernel keeps no such figures.
 * Waiting is CPU the thread wanted and did not get: other processes (the load generator, or
 * anything else on the machine) had the cores.
 */
export function mainThreadSchedule(pid: number): { running: number; waiting: number } | undefined {
  try {
    const [running, waiting] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')
    return { running: Number(running) / 1e9, waiting: Number(waiting) / 1e9 }
  } catch {
    return undefined
  }
}
