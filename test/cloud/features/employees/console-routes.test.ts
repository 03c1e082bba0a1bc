import { beforeAll, describe, expect, it } from 'vitest'
import type { EmployeeImportLine, EmployeeImportReport } from '../../../../shared/console-employees.js'
import type { Employee } from '../../../../shared/employee.js'
import { describeEachDatabase, employee } from '../../../support/cloud-harness.js'
import { adminConsole, type ConsoleApi, listAll, viewerConsole } from '../../console-kit.js'

// The console API: the employee directory, searched (docs/decisions/0048-employee-prefix-search.md)
// and paged, and CSV imports in the
// CLI's format with a report for each line.

const HEADER = 'employeeCode,name,email,department,location,status'

// As payroll exports them: a byte-order mark and CRLF line ends. Line numbers are the file's.
const FIRST_EXPORT = [
  `\uFEFF${HEADER}`,
  'E001,Asha Rao,asha@acme.example,Assembly,Pune,ACTIVE', // 2: good
  'E002,Ravi Kumar,not-an-email,Assembly,Pune,ACTIVE', // 3: bad email
  'E003,,e3@acme.example,Stores,Pune,ACTIVE', // 4: no name
  'E001,Asha Again,asha2@acme.example,Assembly,Pune,ACTIVE', // 5: duplicate code
  'E004,Only Three,fields', // 6: wrong field count
  'E005,Meera Iyer,,Paint,Chakan,RETIRED', // 7: unknown status
  'E006,Kiran Patil,,Stores,,inactive', // 8: good, status in any case
  'E007,"Lal, Mohan",,,,', // 9: good, quoted comma, status defaults to ACTIVE
].join('\r\n')

describeEachDatabase('employees in the console API', (cloud) => {
  const newApi = async () => adminConsole(cloud, await cloud.createTenant())
  const importCsv = async (api: ConsoleApi, text: string) => {
    const res = await api.send('/employees/import', text)
    expect(res.statusCode, res.body).toBe(200)
    return res.json() as EmployeeImportReport
  }
  const line = (report: EmployeeImportReport, n: number) =>
    report.lines.find((l) => l.line === n) as EmployeeImportLine

  describe('CSV import', () => {
    let api: ConsoleApi

    beforeAll(async () => {
      api = await newApi()
    })

    it('imports the good lines and reports every line, the bad ones with each of their errors', async () => {
      const report = await importCsv(api, `${FIRST_EXPORT}\r\n`)
      expect(report.summary).toEqual({ created: 3, updated: 0, unchanged: 0, failed: 5 })
      expect(report.lines.map((l) => [l.line, l.employeeCode, l.outcome])).toEqual([
        [2, 'E001', 'created'],
        [3, 'E002', 'failed'],
        [4, 'E003', 'failed'],
        [5, 'E001', 'failed'],
        [6, 'E004', 'failed'],
        [7, 'E005', 'failed'],
        [8, 'E006', 'created'],
        [9, 'E007', 'created'],
      ])
      expect(line(report, 2).errors).toBeUndefined()
      expect(line(report, 3).errors).toEqual([expect.stringMatching(/^email: /)])
      expect(line(report, 4).errors).toEqual([expect.stringMatching(/^name: /)])
      expect(line(report, 5).errors?.[0]).toMatch(/E001.*line 2/)
      expect(line(report, 6).errors?.[0]).toMatch(/3 fields.*6/)
      expect(line(report, 7).errors).toEqual([expect.stringMatching(/^status: /)])

      const listed = await listAll<Employee>(api, '/employees')
      expect(
        listed
          .map((e) => [e.employeeCode, e.name, e.email, e.department, e.location, e.status])
          .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      ).toEqual([
        ['E001', 'Asha Rao', 'asha@acme.example', 'Assembly', 'Pune', 'ACTIVE'],
        ['E006', 'Kiran Patil', null, 'Stores', null, 'INACTIVE'],
        ['E007', 'Lal, Mohan', null, null, null, 'ACTIVE'],
      ])
    })

    it('reports updated and unchanged employees on a re-import, and leaves the unchanged untouched', async () => {
      const before = (await api.get('/employees/E001')).json()
      const report = await importCsv(
        api,
        [
          HEADER,
          'E001,Asha Rao,asha@acme.example,Assembly,Pune,ACTIVE', // unchanged
          'E006,Kiran Patil,,Dispatch,,INACTIVE', // department changed
          'E007,"Lal, Mohan",,,,ACTIVE', // unchanged: blank status meant ACTIVE
          'E008,Sunita Deshmukh,sunita@acme.example,Quality,Pune,ACTIVE', // new
          'E009,Bad Email,@,,,', // failed
        ].join('\n'),
      )
      expect(report.summary).toEqual({ created: 1, updated: 1, unchanged: 2, failed: 1 })
      expect(report.lines.map((l) => l.outcome)).toEqual([
        'unchanged',
        'updated',
        'unchanged',
        'created',
        'failed',
      ])
      expect((await api.get('/employees/E001')).json()).toEqual(before)
      expect((await api.get('/employees/E006')).json().department).toBe('Dispatch')
    })

    it('refuses a file whose header is wrong, or that is empty, and imports nothing of it', async () => {
      const before = await listAll<Employee>(api, '/employees')
      for (const text of [
        'code,name\nE100,Wrong Header',
        'employeeCode,name,salary\nE100,Unknown Column,1',
        'name,email\nNo Code,x@acme.example',
        '',
        '\r\n\r\n',
      ]) {
        const res = await api.send('/employees/import', text)
        expect(res.statusCode, text).toBe(400)
        expect(res.json().code).toBe('invalid_csv')
        expect(res.json().detail).toMatch(/^Nothing was imported/)
      }
      expect(await listAll<Employee>(api, '/employees')).toEqual(before)
    })

    it('reads only text/csv: JSON or no body is refused, a charset parameter is fine', async () => {
      const json = await api.send(
        '/employees/import',
        JSON.stringify(`${HEADER}\nE200,Json Body,,,,`),
        'application/json',
      )
      expect(json.statusCode).toBe(415)
      expect(json.json()).toMatchObject({
        code: 'unsupported_media_type',
        detail: expect.stringContaining('text/csv'),
      })
      const plain = await api.send('/employees/import', `${HEADER}\nE200,Plain,,,,`, 'text/plain')
      expect(plain.statusCode).toBe(415)
      const none = await api.post('/employees/import')
      expect(none.statusCode).toBe(400)
      expect(none.json().code).toBe('validation_failed')
      expect((await api.get('/employees/E200')).statusCode).toBe(404)

      expect((await importCsv(api, `${HEADER}\nE201,Csv,,,,`)).summary.created).toBe(1)
      const charset = await api.send(
        '/employees/import',
        `${HEADER}\nE202,Charset,,,,`,
        'text/csv; charset=utf-8',
      )
      expect(charset.statusCode, charset.body).toBe(200)
      expect(charset.json().summary.created).toBe(1)
    })

    it('refuses a file over the body limit, and one of more lines than an import takes', async () => {
      const big = `${HEADER}\n${'E300,x,,,,\n'.repeat(110_000)}`
      expect(Buffer.byteLength(big)).toBeGreaterThan(1024 * 1024)
      const tooBig = await api.send('/employees/import', big)
      expect(tooBig.statusCode).toBe(413)
      expect(tooBig.json().code).toBe('payload_too_large')

      const many = await api.send('/employees/import', `employeeCode,name\n${',\n'.repeat(50_001)}`)
      expect(many.statusCode).toBe(400)
      expect(many.json()).toMatchObject({
        code: 'invalid_csv',
        detail: expect.stringMatching(/50001 lines.*50000/),
      })
      expect((await api.get('/employees/E300')).statusCode).toBe(404)
    })
  })

  describe('listing and search', () => {
    let api: ConsoleApi
    const byCode = new Map<string, string>()

    beforeAll(async () => {
      api = await newApi()
      await cloud.upsertEmployees(api.tenantId, [
        employee('E100', { name: 'Ravi Kumar', email: 'ravi.k@acme.example' }),
        employee('RA-07', { name: 'Sunita Rao', email: 'sunita@acme.example' }),
        employee('X1', { name: 'rahul Shah', email: 'RS@ACME.EXAMPLE', status: 'INACTIVE' }),
        employee('X2', { name: 'Meera Iyer', email: 'rani.meera@acme.example' }),
        employee('X3', { name: 'Élodie Martin', email: null }),
        employee('X4', { name: '50%_off Sale', email: null }),
        employee('Y1', { name: 'Kumar Raman', email: 'kumar@acme.example' }),
      ])
      for (const e of await listAll<Employee>(api, '/employees')) byCode.set(e.employeeCode, e.id)
    })

    const codes = async (query: Record<string, string>) =>
      (await listAll<Employee>(api, '/employees', query)).map((e) => e.employeeCode)

    it('finds employees whose code, name or email starts with the search, ignoring the case of A–Z', async () => {
      const ra = ['E100', 'RA-07', 'X1', 'X2'].sort((a, b) =>
        (byCode.get(a) ?? '').localeCompare(byCode.get(b) ?? ''),
      )
      for (const search of ['ra', 'RA', 'Ra', '  rA  ']) expect(await codes({ search }), search).toEqual(ra)
      expect(await codes({ search: 'sunita@acme' })).toEqual(['RA-07'])
      expect(await codes({ search: 'rs@acme.example' })).toEqual(['X1'])
      expect(await codes({ search: 'e1' })).toEqual(['E100'])
      expect(await codes({ search: 'Kumar' })).toEqual(['Y1'])
      // A prefix, not a substring: the surname alone does not find Ravi Kumar.
      expect(await codes({ search: 'Kumar R' })).toEqual(['Y1'])
      expect(await codes({ search: 'zz' })).toEqual([])
    })

    it('folds only A–Z, the same on both databases, and takes % and _ literally', async () => {
      expect(await codes({ search: 'Élo' })).toEqual(['X3'])
      expect(await codes({ search: 'élo' })).toEqual([])
      expect(await codes({ search: '50%' })).toEqual(['X4'])
      expect(await codes({ search: '5_' })).toEqual([])
      expect(await codes({ search: '%' })).toEqual([])
    })

    it('filters by status with a search', async () => {
      expect(await codes({ search: 'ra', status: 'INACTIVE' })).toEqual(['X1'])
      expect(await codes({ status: 'INACTIVE' })).toEqual(['X1'])
    })

    it('pages a search with a cursor, every match once, and refuses a cursor with another search', async () => {
      const all = await codes({ search: 'r' })
      expect(all.length).toBe(4)
      const seen: string[] = []
      let cursor: string | null = null
      let pages = 0
      do {
        const params = new URLSearchParams({ search: 'R', limit: '1', ...(cursor ? { cursor } : {}) })
        const res = await api.get(`/employees?${params}`)
        expect(res.statusCode, res.body).toBe(200)
        seen.push(...res.json().data.map((e: Employee) => e.employeeCode))
        cursor = res.json().nextCursor
        pages++
        if (cursor && pages === 1) {
          const other = await api.get(`/employees?search=k&cursor=${cursor}`)
          expect(other.statusCode).toBe(400)
          expect(other.json().code).toBe('invalid_cursor')
          // The cursor alone carries its search.
          const bare = await api.get(`/employees?limit=1&cursor=${cursor}`)
          expect(bare.json().data.map((e: Employee) => e.employeeCode)).toEqual([all[1]])
        }
      } while (cursor !== null)
      expect(seen).toEqual(all)
      expect(pages).toBe(4)
    })

    it('bounds the search: 100 characters, no control characters', async () => {
      expect((await api.get(`/employees?search=${'r'.repeat(100)}`)).statusCode).toBe(200)
      for (const search of ['r'.repeat(101), 'ra\u0000', 'ra\n', '']) {
        const res = await api.get(`/employees?search=${encodeURIComponent(search)}`)
        expect(res.statusCode, JSON.stringify(search)).toBe(400)
        expect(res.json().code).toBe('validation_failed')
      }
    })

    it('gets one employee by code, and answers 404 for a code the tenant does not have', async () => {
      const res = await api.get('/employees/RA-07')
      expect(res.statusCode).toBe(200)
      expect(res.json()).toMatchObject({ employeeCode: 'RA-07', name: 'Sunita Rao', id: byCode.get('RA-07') })
      const missing = await api.get('/employees/NOPE')
      expect(missing.statusCode).toBe(404)
      expect(missing.json().code).toBe('employee_not_found')
    })
  })

  it('documents the import as a text/csv body, and the search among the list’s parameters', async () => {
    const spec = (await cloud.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    const importing = spec.paths['/api/console/v1/employees/import'].post
    expect(Object.keys(importing.requestBody.content)).toEqual(['text/csv'])
    expect(importing.responses['200'].content['application/json'].schema.properties).toHaveProperty('lines')
    const listing = spec.paths['/api/console/v1/employees'].get
    expect(listing.parameters.map((p: { name: string }) => p.name).sort()).toEqual([
      'cursor',
      'limit',
      'search',
      'status',
    ])
  })

  it('lets a viewer list, search and read employees, but not import', async () => {
    const api = await newApi()
    await importCsv(api, `${HEADER}\nV1,Vera Viewer,,,,`)
    const viewer = await viewerConsole(cloud, api.tenantId)
    expect((await viewer.get('/employees?search=vera')).json().data).toHaveLength(1)
    expect((await viewer.get('/employees/V1')).statusCode).toBe(200)
    const res = await viewer.send('/employees/import', `${HEADER}\nV2,Not Imported,,,,`)
    expect(res.statusCode).toBe(403)
    expect(res.json().code).toBe('insufficient_role')
    expect((await api.get('/employees/V2')).statusCode).toBe(404)
  })
})
