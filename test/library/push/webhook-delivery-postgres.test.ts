/** Push delivery to a real receiver (test/library/push/delivery-cases.ts) on a PostgreSQL server: the outbox. */
import t from 'tap'
import { testSchema } from '../../fixtures/test-schema.js'
import { deliveryCases } from './delivery-cases.js'

const url = process.env.TEST_DATABASE_URL

if (url === undefined) {
  t.test('PostgreSQL', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  deliveryCases(t, async (t) => ({ DATABASE_URL: url, DATABASE_SCHEMA: testSchema(t, url) }))
}
