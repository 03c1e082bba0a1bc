import { MIN_PASSWORD_LENGTH } from '../../../shared/console-auth.js'

/**
 * Why a chosen password is refused, or undefined. It is judged as it will be hashed, after NFKC
 * normalization (password.ts), and its length is counted in code points: NIST SP 800-63B §5.1.1.2
 * counts each Unicode code point as one character, after normalization. `"e\u0301"` (e and a
 * combining accent) is one character, `é`, once normalized. A password of white space alone is
 * refused: it is what an empty field looks like, and the first thing guessed.
 */
export function newPasswordProblem(password: string): string | undefined {
  const normalized = password.normalize('NFKC')
  if (/^[\s\p{Default_Ignorable_Code_Point}]*$/u.test(normalized)) return 'must not be blank'
  const characters = [...normalized].length
  if (characters < MIN_PASSWORD_LENGTH)
    return `must be at least ${MIN_PASSWORD_LENGTH} characters (counted after Unicode normalization)`
  return undefined
}
