/**
 * The fuzz of every route (route-fuzz.ts) on SQLite, with the generators' own checks; its
 * PostgreSQL half is route-fuzz.postgres.test.ts, a file of its own so the two run side by side.
 */
import { describeOnDatabase } from '../../support/cloud-harness.js'
import { checkRouteFuzzGenerators, fuzzEveryRoute } from './route-fuzz.js'

checkRouteFuzzGenerators()
describeOnDatabase('sqlite', 'fuzzing every route', fuzzEveryRoute)
