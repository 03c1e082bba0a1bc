import { describe, expect, it } from 'vitest'
import { employeeCodes, wholeNumbers } from '../../../../cloud/console/src/attendance-form.js'
import {
  describeSetting,
  formToPolicy,
  POLICY_FIELDS,
  policyToForm,
} from '../../../../cloud/console/src/attendance-policy-fields.js'

describe('the policy form', () => {
  it('sends what was set and leaves out what is inherited', () => {
    const settings = {
      legalRegime: 'FACTORIES_ACT_1948' as const,
      fullDayMinutes: 480,
      countEarlyArrival: false,
      weekStart: 1,
      weeklyOffDays: [0],
    }
    const form = policyToForm(settings)
    expect(form.texts.halfDayMinutes).toBe('')
    expect(form.texts.countEarlyArrival).toBe('false')
    expect(formToPolicy(form)).toEqual({ settings })
  })

  it('tells an empty list of weekly off days from an inherited one', () => {
    const form = policyToForm({})
    expect(form.offDays).toBeNull()
    expect(formToPolicy(form).settings).toEqual({})
    expect(formToPolicy({ ...form, offDays: [] }).settings).toEqual({ weeklyOffDays: [] })
    expect(formToPolicy({ ...form, offDays: [6, 0] }).settings).toEqual({ weeklyOffDays: [0, 6] })
  })

  it('refuses a number that is not whole, naming the field', () => {
    const form = policyToForm({})
    form.texts.fullDayMinutes = '7.5'
    expect(formToPolicy(form).error).toBe('Full day (minutes) must be a whole number, 0 or more.')
    expect(wholeNumbers({ a: ' 12 ', b: '' }, { a: 'A', b: 'B' })).toEqual({ values: { a: 12 } })
    expect(wholeNumbers({ a: '-1' }, { a: 'A' }).error).toMatch(/^A must/)
  })

  it('has a field for every policy setting but the weekly off days', () => {
    expect(POLICY_FIELDS.map((f) => f.name)).toHaveLength(new Set(POLICY_FIELDS.map((f) => f.name)).size)
    expect(POLICY_FIELDS).toHaveLength(17)
  })

  it('describes settings for people', () => {
    expect(describeSetting('dailyLimitMinutes', 540)).toBe('540 min (9:00)')
    expect(describeSetting('weeklyOffDays', [0, 6])).toBe('Sunday, Saturday')
    expect(describeSetting('weeklyOffDays', [])).toBe('None')
    expect(describeSetting('pairing', 'FIRST_LAST')).toMatch(/^First IN to last OUT/)
    expect(describeSetting('countEarlyArrival', true)).toBe('Yes')
    expect(describeSetting('weekStart', 1)).toBe('Monday')
  })
})

describe('recompute employee codes', () => {
  it('splits on commas and spaces, once each', () => {
    expect(employeeCodes(' E001, E002  E003;E001 ')).toEqual(['E001', 'E002', 'E003'])
    expect(employeeCodes('')).toEqual([])
  })
})
