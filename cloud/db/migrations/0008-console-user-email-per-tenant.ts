import type { Kysely } from 'kysely'

// A console user's email is unique within its tenant, no longer across all of them: a tenant that
// invited an address another tenant already had was told so (409), which told it the address is a
// user elsewhere, and could take addresses other tenants would want. Sign-in finds the email's
// users in every tenant (console_users_email, no longer unique) and the password picks among them.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('console_users_email').execute()
  await db.schema.createIndex('console_users_email').on('console_users').column('email').execute()
  await db.schema
    .createIndex('console_users_tenant_email')
    .on('console_users')
    .columns(['tenant_id', 'email'])
    .unique()
    .execute()
}

// Down fails, as it should, once two tenants share an email: one of those users must go first.
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('console_users_tenant_email').execute()
  await db.schema.dropIndex('console_users_email').execute()
  await db.schema.createIndex('console_users_email').on('console_users').column('email').unique().execute()
}
