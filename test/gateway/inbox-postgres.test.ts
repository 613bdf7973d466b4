/**
 * The inbox across two gateway instances on one PostgreSQL database: a conversation a caller holds with one
 * instance shows in the other's list and trace, and reaches a live stream open on the other; a takeover on either
 * is seen on both. Both instances list the same pages, and show the same knowledge-gaps chart and questions.
 */
import t from 'tap'
import { Client, OPERATOR_KEY, URI } from '../fixtures/conversation-gateway.js'
import { startGateway } from '../fixtures/gateway-helpers.js'
import { InboxEvents } from '../fixtures/inbox-events.js'
import { testSchema } from '../fixtures/test-schema.js'
import { contextIdOf } from '../fixtures/context-ids.js'

const url = process.env.TEST_DATABASE_URL
const AUTH = { authorization: `Bearer ${OPERATOR_KEY}` }

async function operator (base: string, method: 'GET' | 'POST', path: string): Promise<{ status: number, body: any }> {
  const response = await fetch(`${base}/api/v1/agents/demo/${path}`, { method, headers: AUTH })
  return { status: response.status, body: await response.json() }
}

if (url === undefined) {
  t.test('the inbox on two instances', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  // Dropped when the file's tests are over, after the gateways of the test were closed.
  const schema = testSchema(t, url)
  t.test('the inbox on two instances sharing one PostgreSQL database', async (t) => {
    const pg = (n: number): string => contextIdOf(`pg-inbox-${n}`)
    const env = { DATABASE_URL: url, DATABASE_SCHEMA: schema, OPERATOR_API_KEY: OPERATOR_KEY }
    const [a, b] = await Promise.all([startGateway(t, env), startGateway(t, env)])
    const onB = new InboxEvents(b.base, 'demo', `Bearer ${OPERATOR_KEY}`)
    const onA = new InboxEvents(a.base, 'demo', `Bearer ${OPERATOR_KEY}`)
    await Promise.all([onA.ready(), onB.ready()])

    const caller = new Client(t, a.app)
    const answer = await caller.send('Should I sue the courier?', { contextId: pg(1) })
    const seen = await onB.conversation(pg(1))
    t.match(seen, { ownership: 'ai_owned', needsPerson: ['scope_boundary'], lastTurn: { role: 'agent' } }, 'A\'s conversation reaches B\'s stream')

    const trace = await operator(b.base, 'GET', `conversations/${pg(1)}/trace`)
    t.equal(trace.status, 200)
    t.same(trace.body.turns[1].envelope, answer.message.metadata[URI], 'B\'s trace holds the envelope A sent')

    t.equal((await operator(b.base, 'POST', `conversations/${pg(1)}/takeover`)).status, 200)
    t.match(await onA.conversation(pg(1), (entry) => entry.ownership === 'human_owned'), { version: seen.version + 1 }, 'B\'s takeover reaches A\'s stream')

    for (let n = 2; n <= 5; n++) await new Client(t, n % 2 === 0 ? b.app : a.app).send('When are you open on Saturday?', { contextId: pg(n) })
    for (const query of ['', '?limit=2', '?owner=human_owned', '?needsPerson=false']) {
      const fromA = await operator(a.base, 'GET', `conversations${query}`)
      const fromB = await operator(b.base, 'GET', `conversations${query}`)
      t.same(fromA, fromB, `the same list from both instances (${query || 'no query'})`)
    }
    const first = await operator(a.base, 'GET', 'conversations?limit=2')
    t.same(first.body.conversations.map((entry: any) => entry.contextId), [pg(5), pg(4)])
    const second = await operator(b.base, 'GET', `conversations?limit=2&cursor=${first.body.next as string}`)
    t.same(second.body.conversations.map((entry: any) => entry.contextId), [pg(3), pg(2)], 'a cursor from A pages on B')
    const last = await operator(b.base, 'GET', `conversations?limit=2&cursor=${second.body.next as string}`)
    t.same(last.body, { conversations: [last.body.conversations[0]] })
    t.equal(last.body.conversations[0].contextId, pg(1))
    // Closing an instance ends its stream.
    await Promise.all([a.app.close(), b.app.close()])
    await Promise.all([onA.ended, onB.ended])
  })

  t.test('the knowledge-gaps view on two instances: answers given on either, the same chart and list from both', async (t) => {
    const gap = (n: number): string => contextIdOf(`pg-gaps-${n}`)
    const env = { DATABASE_URL: url, DATABASE_SCHEMA: schema, OPERATOR_API_KEY: OPERATOR_KEY }
    const [a, b] = await Promise.all([startGateway(t, env), startGateway(t, env)])
    // The schema is the file's: the first test's answers count too.
    const before = (await operator(a.base, 'GET', 'answers?window=7d')).body.totals
    const questions = ['What is the capital of France?', 'Do you sell gift cards?', 'what is the capital of FRANCE', 'Is there parking?', 'When are you open on Saturday?']
    for (const [n, question] of questions.entries()) await new Client(t, n % 2 === 0 ? a.app : b.app).send(question, { contextId: gap(n) })
    const fromA = await operator(a.base, 'GET', 'answers/unanswered?limit=2')
    const fromB = await operator(b.base, 'GET', 'answers/unanswered?limit=2')
    t.same(fromA, fromB, 'the same page from both instances')
    t.same(fromA.body.questions.map((group: any) => [group.key, group.count, group.conversations]),
      [['capital france', 2, [gap(2), gap(0)]], ['cards gift sell', 1, [gap(1)]]], 'answers given on A and on B, grouped')
    const rest = await operator(b.base, 'GET', `answers/unanswered?limit=2&cursor=${fromA.body.next as string}`)
    t.same(rest.body.questions.map((group: any) => group.key), ['parking'], 'a cursor from A pages on B')
    const series = await operator(a.base, 'GET', 'answers?window=7d')
    t.same(series, await operator(b.base, 'GET', 'answers?window=7d').then((other) => ({ ...other, body: { ...other.body, to: series.body.to } })),
      'the same chart from both (but for the moment each read it)')
    t.equal(series.body.totals.answered - before.answered, 1, 'the answered one')
    t.equal(series.body.totals.partial + series.body.totals.unanswered - before.partial - before.unanswered, 4, 'the four it could not answer')
  })
}
