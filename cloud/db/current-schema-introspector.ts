import {
  type ColumnMetadata,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type Kysely,
  PostgresDialect,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from 'kysely'

/** Kysely's own bookkeeping tables, left out unless asked for (as Kysely's introspectors do). */
const KYSELY_TABLES = ['kysely_migration', 'kysely_migration_lock']

interface ColumnRow {
  table: string
  relkind: string
  schema: string
  column: string
  type: string
  type_schema: string
  not_null: boolean
  has_default: boolean
}

/**
 * What Kysely's migrator asks of PostgreSQL (does the migration table exist?), answered from the
 * current schema only. Kysely's own introspector reads every schema of the database and calls
 * pg_get_serial_sequence() on each of their tables, so a schema another deployment drops while we
 * migrate fails our migration with "schema ... does not exist" (test/cloud/db/migrate.test.ts). The
 * cloud's tables all live in the first schema of the search path (cloud/db/migrate.ts), so that is
 * the one to look at. `isAutoIncrementing` is not computed: it is the expensive part, and nothing
 * here reads it.
 */
class CurrentSchemaIntrospector implements DatabaseIntrospector {
  // biome-ignore lint/suspicious/noExplicitAny: the introspector serves any schema, as Kysely's does
  constructor(private readonly db: Kysely<any>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`
      select nspname as name from pg_catalog.pg_namespace
      where nspname !~ '^pg_' and nspname <> 'information_schema'
      order by nspname`.execute(this.db)
    return rows
  }

  async getTables(
    options: DatabaseMetadataOptions = { withInternalKyselyTables: false },
  ): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      select c.relname as table, c.relkind, ns.nspname as schema, a.attname as column,
             t.typname as type, tns.nspname as type_schema, a.attnotnull as not_null,
             a.atthasdef as has_default
      from pg_catalog.pg_class c
      join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
      join pg_catalog.pg_attribute a on a.attrelid = c.oid
      join pg_catalog.pg_type t on t.oid = a.atttypid
      join pg_catalog.pg_namespace tns on tns.oid = t.typnamespace
      where ns.nspname = current_schema()
        and c.relkind in ('r', 'v', 'p')
        and a.attnum >= 0 and not a.attisdropped
      order by c.relname, a.attnum`.execute(this.db)
    const tables = new Map<string, { isView: boolean; schema: string; columns: ColumnMetadata[] }>()
    for (const row of rows) {
      if (!options.withInternalKyselyTables && KYSELY_TABLES.includes(row.table)) continue
      let table = tables.get(row.table)
      if (!table) {
        table = { isView: row.relkind === 'v', schema: row.schema, columns: [] }
        tables.set(row.table, table)
      }
      table.columns.push({
        name: row.column,
        dataType: row.type,
        dataTypeSchema: row.type_schema,
        isAutoIncrementing: false,
        isNullable: !row.not_null,
        hasDefaultValue: row.has_default,
      })
    }
    return [...tables].map(([name, t]) => ({ name, ...t }))
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) }
  }
}

/** PostgreSQL as Kysely speaks it, introspecting the current schema only (see above). */
export class CurrentSchemaPostgresDialect extends PostgresDialect {
  // biome-ignore lint/suspicious/noExplicitAny: as PostgresDialect's own signature
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db)
  }
}
