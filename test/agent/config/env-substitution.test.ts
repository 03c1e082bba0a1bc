// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are ${NAME} references, the subject under test.
import { describe, expect, it } from 'vitest'
import { substituteEnv, substituteString } from '../../../agent/config/env-substitution.js'
import { ProblemList } from '../../../agent/config/problem-list.js'

function substitute(text: string, env: NodeJS.ProcessEnv) {
  const problems = new ProblemList()
  const value = substituteString(text, env, ['cloud', 'clientSecret'], problems)
  return { value, problems: problems.toProblems() }
}

describe('substituteString', () => {
  it('replaces ${NAME} with the variable, as often as it appears', () => {
    expect(substitute('${A}', { A: 'x' })).toEqual({ value: 'x', problems: [] })
    expect(substitute('pre-${A}-${B_2}-${A}', { A: 'x', B_2: 'y' }).value).toBe('pre-x-y-x')
  })

  it('substitutes text as it is, YAML punctuation and $ included', () => {
    expect(substitute('${A}', { A: 'a: b # c\n- d ${B} $${' }).value).toBe('a: b # c\n- d ${B} $${')
  })

  it('takes an empty variable as empty', () => {
    expect(substitute('[${A}]', { A: '' }).value).toBe('[]')
  })

  it('writes $${ as a literal ${, and leaves any other $ alone', () => {
    expect(substitute('$${A}', { A: 'x' })).toEqual({ value: '${A}', problems: [] })
    expect(substitute('cost $5, $A, $', {})).toEqual({ value: 'cost $5, $A, $', problems: [] })
  })

  it('names an unset variable and where it is used, not its neighbours', () => {
    expect(substitute('${HAJRI_CLIENT_SECRET}', {}).problems).toEqual([
      {
        path: 'cloud.clientSecret',
        message: 'uses the environment variable HAJRI_CLIENT_SECRET, which is not set',
      },
    ])
  })

  it('refuses a ${ that starts no reference', () => {
    for (const text of ['${', '${A', '${1A}', '${A-B}', '${}', '${A:-default}']) {
      expect(substitute(text, { A: 'x' }).problems, text).toEqual([
        {
          path: 'cloud.clientSecret',
          message:
            'has a "${" that starts no ${NAME} reference (NAME is letters, digits and _; write $${ for a literal ${)',
        },
      ])
    }
  })
})

describe('substituteEnv', () => {
  it('substitutes string values at any depth, never keys, and keeps other values', () => {
    const problems = new ProblemList()
    const document = { a: ['${X}', 1, true, null, { '${X}': '${X}' }] }
    expect(substituteEnv(document, { X: 'y' }, problems)).toEqual({
      a: ['y', 1, true, null, { '${X}': 'y' }],
    })
    expect(problems.size).toBe(0)
    // A copy: the parsed document is left as it was.
    expect(document.a[0]).toBe('${X}')
  })

  it('reports each unset variable at its own path', () => {
    const problems = new ProblemList()
    substituteEnv({ cloud: { url: '${URL}' }, devices: [{ id: 'a' }, { id: '${ID}' }] }, {}, problems)
    expect(problems.toProblems().map((p) => p.path)).toEqual(['cloud.url', 'devices[1].id'])
  })

  it('keeps __proto__ as an ordinary key', () => {
    const problems = new ProblemList()
    const copy = substituteEnv(JSON.parse('{"__proto__": {"polluted": 1}}'), {}, problems) as object
    expect(Object.keys(copy)).toEqual(['__proto__'])
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})
