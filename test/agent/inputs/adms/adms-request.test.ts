import { describe, expect, it } from 'vitest'
import { parseAdmsTarget, stampOf } from '../../../../agent/inputs/adms/adms-request.js'

describe('ADMS request targets', () => {
  it('knows the pages under /iclock/, with or without the .aspx eSSL firmware adds', () => {
    expect(parseAdmsTarget('/iclock/cdata?SN=CJDE193560303&options=all')?.page).toBe('cdata')
    expect(parseAdmsTarget('/iclock/cdata.aspx?SN=CJDE193560303&table=ATTLOG')?.page).toBe('cdata')
    expect(parseAdmsTarget('/iclock/getrequest.aspx?SN=X1')?.page).toBe('getrequest')
    expect(parseAdmsTarget('/iclock/devicecmd?SN=X1')?.page).toBe('devicecmd')
    expect(parseAdmsTarget('/iclock/ping?SN=X1')?.page).toBe('ping')
    expect(parseAdmsTarget('/iclock/registry?SN=X1')?.page).toBe('registry')
    expect(parseAdmsTarget('/iclock/CDATA?SN=X1')?.page).toBe('cdata')
  })

  it('is nothing for other paths', () => {
    for (const path of [
      '/',
      '/iclock',
      '/iclock/',
      '/iclock/fdata',
      '/iclock/cdata/x',
      '/status',
      '/iclock/../status',
    ]) {
      expect(parseAdmsTarget(path), path).toBeUndefined()
    }
  })

  it('takes the serial number from SN, or sn as some firmware writes it, if it is one', () => {
    expect(parseAdmsTarget('/iclock/cdata?SN=CJDE193560303')?.serialNumber).toBe('CJDE193560303')
    expect(parseAdmsTarget('/iclock/cdata?sn=AEH2192760012')?.serialNumber).toBe('AEH2192760012')
    expect(parseAdmsTarget('/iclock/cdata')?.serialNumber).toBeUndefined()
    expect(parseAdmsTarget('/iclock/cdata?SN=')?.serialNumber).toBeUndefined()
    expect(parseAdmsTarget('/iclock/cdata?SN=a%20b')?.serialNumber).toBeUndefined()
    expect(parseAdmsTarget(`/iclock/cdata?SN=${'A'.repeat(65)}`)?.serialNumber).toBeUndefined()
  })

  it('decodes query values (INFO carries spaces, as %20 or +)', () => {
    const target = parseAdmsTarget('/iclock/getrequest?SN=X1&INFO=Ver%208.0.4.2,12,10')
    expect(target?.query.get('INFO')).toBe('Ver 8.0.4.2,12,10')
    expect(parseAdmsTarget('/iclock/getrequest?SN=X1&INFO=Ver+6.60,1')?.query.get('INFO')).toBe('Ver 6.60,1')
  })

  it('keeps an upload stamp only if it looks like one', () => {
    const stamp = (query: string) => stampOf(new URLSearchParams(query))
    expect(stamp('Stamp=9999')).toBe('9999')
    expect(stamp('Stamp=None')).toBe('None')
    expect(stamp('stamp=603923921')).toBe('603923921')
    expect(stamp('')).toBeUndefined()
    expect(stamp('Stamp=1%0AX')).toBeUndefined()
    expect(stamp(`Stamp=${'9'.repeat(33)}`)).toBeUndefined()
  })
})
