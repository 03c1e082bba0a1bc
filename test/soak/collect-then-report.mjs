/**
 * Preloaded into the soak's children (NODE_OPTIONS --import, see process-probe.ts): on SIGUSR2, a
 * full garbage collection, then Node's diagnostic report (the same JSON as --report-on-signal
 * writes) into the directory HAJRI_SOAK_REPORT_DIR names.
 *
 * Why collect first: a heap sampled at a random moment falls anywhere on a collection's sawtooth
 * (tens of MB apart under load), so its trend over ten minutes is mostly the phase of the teeth.
 * After a full collection what is left is what the process still holds, which is what a leak
 * raises. A plain .mjs file: it loads before `--import tsx` has registered TypeScript.
 */
import { renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

const directory = process.env.HAJRI_SOAK_REPORT_DIR
if (directory) {
  // V8 gives a context created after this flag a `gc` global; the main context was made before it.
  setFlagsFromString('--expose-gc')
  const collect = runInNewContext('gc')
  let written = 0
  process.on('SIGUSR2', () => {
    collect()
    const path = join(directory, `report-${process.pid}-${++written}.json`)
    // Written aside and renamed, so the prober never reads half a report.
    writeFileSync(`${path}.partial`, JSON.stringify(process.report.getReport()))
    renameSync(`${path}.partial`, path)
  })
}
