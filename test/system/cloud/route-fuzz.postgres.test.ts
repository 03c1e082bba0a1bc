/** The fuzz of every route (route-fuzz.ts) on PostgreSQL; its SQLite half is route-fuzz.sqlite.test.ts. */
import { describeOnDatabase } from '../../support/cloud-harness.js'
import { fuzzEveryRoute } from './route-fuzz.js'

describeOnDatabase('postgres', 'fuzzing every route', fuzzEveryRoute)
