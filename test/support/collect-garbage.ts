import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

// V8 gives a context made after this flag a `gc` global; the test's own context was made before it,
// so no test runner needs --expose-gc.
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** A full, synchronous garbage collection: what is still reachable is all the heap then holds. */
export function collectGarbage(): void {
  gc()
}
