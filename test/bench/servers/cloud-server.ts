import { buildApp } from '../../../cloud/app.js'
import { loadCloudConfig } from '../../../cloud/config.js'
import { openDatabase } from '../../../cloud/db/database.js'
import { migrateToLatest } from '../../../cloud/db/migrate.js'
import { serveInChild } from './serve-in-child.js'

/**
 * The Hajri cloud as `hajri-cloud serve` runs it (product configuration defaults, migrated
 * database), without a logger so that log output is not what gets measured. argv[2]: the database
 * URL, already seeded by the parent.
 */
await serveInChild(async () => {
  const url = process.argv[2]
  if (!url) throw new Error('usage: cloud-server.ts <database url>')
  const config = loadCloudConfig({ HAJRI_DATABASE_URL: url, HAJRI_LOG_LEVEL: 'silent' })
  const database = openDatabase(config.databaseUrl)
  await migrateToLatest(database.db)
  return buildApp({ config, database, logger: false })
})
