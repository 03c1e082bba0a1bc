import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseDatabaseUrl } from '../../../cloud/settings/database-url.js'

describe('parseDatabaseUrl', () => {
  const cwd = '/srv/hajri'

  it('reads a relative SQLite path against the working directory given', () => {
    expect(parseDatabaseUrl('sqlite:./data/hajri.db', cwd)).toEqual({
      dialect: 'sqlite',
      path: '/srv/hajri/data/hajri.db',
    })
    expect(parseDatabaseUrl('sqlite:hajri.db', cwd)).toEqual({
      dialect: 'sqlite',
      path: '/srv/hajri/hajri.db',
    })
    expect(parseDatabaseUrl('sqlite:../shared/hajri.db', cwd)).toEqual({
      dialect: 'sqlite',
      path: '/srv/shared/hajri.db',
    })
  })

  it("reads a relative SQLite path against the process's directory by default", () => {
    expect(parseDatabaseUrl('sqlite:./data/hajri.db')).toEqual({
      dialect: 'sqlite',
      path: resolve(process.cwd(), 'data/hajri.db'),
    })
  })

  it('keeps an absolute SQLite path, with or without the URL slashes', () => {
    expect(parseDatabaseUrl('sqlite:/var/lib/hajri/hajri.db', cwd)).toEqual({
      dialect: 'sqlite',
      path: '/var/lib/hajri/hajri.db',
    })
    expect(parseDatabaseUrl('sqlite:///var/lib/hajri/hajri.db', cwd)).toEqual({
      dialect: 'sqlite',
      path: '/var/lib/hajri/hajri.db',
    })
  })

  it('keeps an in-memory SQLite database as it is', () => {
    expect(parseDatabaseUrl('sqlite::memory:', cwd)).toEqual({ dialect: 'sqlite', path: ':memory:' })
  })

  it('hands a PostgreSQL URL, either scheme, to pg unchanged', () => {
    for (const url of [
      'postgres://hajri:s3cret@db.internal:5432/hajri',
      'postgresql://db.internal/hajri?sslmode=require',
      'postgres://postgres@127.0.0.1:5432/test?options=-c%20search_path%3Dx',
    ]) {
      expect(parseDatabaseUrl(url, cwd)).toEqual({ dialect: 'postgres', url })
    }
  })

  it('refuses a SQLite URL without a file', () => {
    expect(() => parseDatabaseUrl('sqlite:', cwd)).toThrow(/HAJRI_DATABASE_URL: no file in "sqlite:"/)
    expect(() => parseDatabaseUrl('sqlite://', cwd)).toThrow(/no file/)
  })

  it('refuses any other scheme, naming the variable and the value', () => {
    for (const url of [
      'mysql://db/hajri',
      'file:./hajri.db',
      './data/hajri.db',
      '',
      'postgres:/db',
      'sqlite3:x.db',
    ]) {
      expect(() => parseDatabaseUrl(url, cwd), url).toThrow(
        `HAJRI_DATABASE_URL: must start with sqlite: or postgres://, got "${url}"`,
      )
    }
  })
})
