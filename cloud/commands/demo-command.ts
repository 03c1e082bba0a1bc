import pino from 'pino'
import pretty from 'pino-pretty'
import { loadCloudConfig } from '../config.js'
import { DemoRunner, DemoStopped } from '../demo/demo-runner.js'
import { loadDemoSettings } from '../demo/demo-settings.js'
import { loggerOptions } from '../logger-options.js'
import { command } from './command-context.js'

/**
 * A child that exits on its own is a failure, unless the demo is being stopped: Ctrl-C in a terminal
 * signals the whole process group, and the simulated device may be gone before this process has run
 * its own SIGINT handler. This long is left for that signal to arrive before blaming the child.
 */
const SIGNAL_GRACE_MS = 1000

/**
 * `hajri-cloud demo`, which `npm start` runs (docs/decisions/0059-npm-start-is-a-demo.md): the cloud on the
 * configured database with a demo tenant, a local agent and a simulated device, until Ctrl-C (SIGINT) or
 * SIGTERM; then everything stops in order and the process exits 0. A second Ctrl-C stops at once.
 */
const demo = command({
  name: 'demo',
  summary: 'npm start: the cloud with a demo tenant, a local agent and a simulated device',
  options: [],
  run: async ({ io, actor }) => {
    const config = loadCloudConfig(io.env)
    const settings = loadDemoSettings(io.env, io.cwd, config)
    // Quiet unless asked (HAJRI_LOG_LEVEL): the banner and the demo's own lines are what a newcomer reads.
    const level = io.env.HAJRI_LOG_LEVEL ? config.logLevel : 'warn'
    const log = process.stderr.isTTY
      ? pino(loggerOptions(level), pretty({ colorize: true, sync: true, destination: 2 }))
      : pino(loggerOptions(level), pino.destination({ fd: 2, sync: true }))

    let signalled = false
    let finishing = false
    const finish = (status: number) => {
      if (finishing) return
      finishing = true
      runner.stop().then(
        () => {
          if (status === 0) io.stdout('Hajri demo stopped.\n')
          // Where stdout is an asynchronous pipe (macOS), let the last line out before exiting.
          process.stdout.write('', () => process.exit(status))
        },
        (err: unknown) => {
          io.stderr(`hajri-cloud demo: stopping failed: ${(err as Error).message}\n`)
          process.exit(1)
        },
      )
    }
    const onSignal = (signal: NodeJS.Signals) => {
      if (signalled) {
        io.stderr(`${signal} again: stopping at once\n`)
        runner.kill()
        process.exit(130)
      }
      signalled = true
      io.stdout(`\nStopping the demo (${signal}): the simulated device, the agent, then the cloud...\n`)
      finish(0)
    }
    const runner = new DemoRunner({
      config,
      settings,
      env: io.env,
      cwd: io.cwd,
      log,
      actor,
      stdout: io.stdout,
      stderr: io.stderr,
      onChildExit: (message) => {
        setTimeout(() => {
          if (signalled || finishing) return
          io.stderr(`hajri-cloud demo: ${message}; stopping the demo\n`)
          finish(1)
        }, SIGNAL_GRACE_MS)
      },
    })
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
    try {
      await runner.start()
    } catch (err) {
      // Stopped by a signal while starting: `finish` exits once everything is down.
      if (err instanceof DemoStopped || signalled) return
      await runner.stop()
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
      throw err
    }
  },
})

export const demoCommands = [demo]
