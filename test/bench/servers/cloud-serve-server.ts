import pino from 'pino'
import { loadCloudConfig } from '../../../cloud/config.js'
import { loggerOptions } from '../../../cloud/logger-options.js'
import { startServer } from '../../../cloud/server.js'
import { runInChild } from './serve-in-child.js'

/**
 * The Hajri cloud as `hajri-cloud serve` starts it (cloud/commands/server-commands.ts): startServer
 * with pino at `info` writing to stdout, the webhook dispatcher and the attendance worker running,
 * product defaults otherwise. The parent points stdout at /dev/null (ServerProcess' discardStdout),
 * so the log lines are made and written, as in production, but not read. argv[2]: the database URL;
 * argv[3]: the log level (`info`, as `serve` has it by default, or `silent`: what logging costs);
 * argv[4]: HAJRI_SECRET_KEY, when the database needs one given (PostgreSQL). Speaks ServerProcess'
 * IPC (runInChild).
 */
await runInChild(async () => {
  const [url, logLevel, secretKey] = process.argv.slice(2)
  if (!url || !logLevel)
    throw new Error('usage: cloud-serve-server.ts <database url> <log level> [secret key]')
  const config = loadCloudConfig({
    HAJRI_DATABASE_URL: url,
    HAJRI_HOST: '127.0.0.1',
    HAJRI_PORT: '0',
    HAJRI_LOG_LEVEL: logLevel,
    ...(secretKey ? { HAJRI_SECRET_KEY: secretKey } : {}),
  })
  return startServer(config, pino(loggerOptions(config.logLevel)))
})
