import SqliteDatabase from 'better-sqlite3'

/** Rows in the punch log of a database file whose server has stopped: what was really stored. */
export function countPunches(path: string): number {
  const db = new SqliteDatabase(path, { readonly: true })
  try {
    const row = db.prepare('select count(*) as n from punches').get() as { n: number }
    return row.n
  } finally {
    db.close()
  }
}
