/**
 * The operator API's knowledge-gaps routes (docs/knowledge-gaps.md) through the gateway, after real turns against the
 * demo agent: answers by coverage over a window, the questions it could not answer grouped and paged; auth, unknown
 * agents, bad query parameters (400 with a JSON body), and a store without an answer log.
 */
import t from 'tap'
import Fastify from 'fastify'
import operatorApi from '../../plugins/operator-api.js'
import type { Inbox } from '../../packages/a2a-converse/src/runtime/inbox.js'
import { Client, gateway, OPERATOR_KEY, operator, URI } from '../fixtures/conversation-gateway.js'
import { rpc, startGateway, userMessage } from '../fixtures/gateway-helpers.js'
import { startUpstream } from '../fixtures/upstream-agent.js'

const EMPTY = { answered: 0, partial: 0, unanswered: 0, unclear: 0, notAssessed: 0 }

t.test('answers by coverage and the questions the demo agent could not answer, grouped', async (t) => {
  const app = await gateway(t)
  const client = new Client(t, app)
  const contextOf = async (text: string): Promise<string> => {
    const result = await client.send(text)
    return (result.message ?? result.task).contextId
  }
  const before = (await operator(app, 'GET', 'demo/answers')).json()
  t.same(before.totals, EMPTY, 'nothing answered yet')

  const giftCards = await contextOf('Do you sell gift cards?')
  const capital = await contextOf('What is the capital of France?')
  const again = await contextOf('what is the CAPITAL of france')
  await contextOf('When are you open on Saturday?')
  await contextOf('hello')
  await contextOf('Should I sue the courier?')
  await contextOf('I would like to book a table')

  const day = await operator(app, 'GET', 'demo/answers')
  t.equal(day.statusCode, 200)
  const series = day.json()
  t.equal(series.window, '24h', 'the default window')
  t.equal(series.buckets.length, 24)
  t.same(series.totals, { answered: 1, partial: 1, unanswered: 3, unclear: 1, notAssessed: 1 },
    'every answer counted by its verdict; the routine\'s turn is not assessed')
  const summed = { ...EMPTY }
  for (const bucket of series.buckets) for (const member of Object.keys(EMPTY) as Array<keyof typeof EMPTY>) summed[member] += bucket[member]
  t.same(summed, series.totals, 'the buckets add up to the totals')
  const week = (await operator(app, 'GET', 'demo/answers?window=7d')).json()
  t.equal(week.buckets.length, 28)
  t.same(week.totals, series.totals)

  const gaps = await operator(app, 'GET', 'demo/answers/unanswered')
  t.equal(gaps.statusCode, 200)
  const body = gaps.json()
  t.equal(body.window, '24h')
  t.equal(body.next, undefined, 'one page')
  t.same(body.questions.map((group: { key: string, count: number }) => [group.key, group.count]), [
    ['capital france', 2], ['cards gift sell', 1]
  ], 'the same question twice is one group; the scope boundary is not a gap')
  t.match(body.questions[0], { text: 'what is the CAPITAL of france', partial: 0, conversations: [again, capital] })
  t.match(body.questions[1], { text: 'Do you sell gift cards?', partial: 1, conversations: [giftCards] })

  // Each group opens its conversation: the ids are the operator API's own.
  const opened = await operator(app, 'GET', `demo/conversations/${body.questions[0].conversations[0]}/trace`)
  t.equal(opened.statusCode, 200)
  t.equal(opened.json().turns[0].text, 'what is the CAPITAL of france')

  // Paged: one group a page, the cursor carries on.
  const first = (await operator(app, 'GET', 'demo/answers/unanswered?limit=1&window=7d')).json()
  t.same(first.questions.map((group: { key: string }) => group.key), ['capital france'])
  t.match(first.next, /^[A-Za-z0-9_-]+$/, 'an opaque cursor')
  const second = (await operator(app, 'GET', `demo/answers/unanswered?limit=1&window=7d&cursor=${first.next as string}`)).json()
  t.same(second.questions.map((group: { key: string }) => group.key), ['cards gift sell'])
  t.equal(second.next, undefined, 'the last page has none')
})

t.test('bad query parameters: 400 with a JSON body; unknown agent: 404; no key: 401', async (t) => {
  const app = await gateway(t)
  const cursor = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')
  const bad = [
    'demo/answers?window=1y', 'demo/answers?window=', 'demo/answers?limit=1', 'demo/answers?window=24h&window=7d',
    'demo/answers/unanswered?window=30d', 'demo/answers/unanswered?limit=0', 'demo/answers/unanswered?limit=101',
    'demo/answers/unanswered?limit=2.5', 'demo/answers/unanswered?limit=', 'demo/answers/unanswered?other=1',
    'demo/answers/unanswered?cursor=', 'demo/answers/unanswered?cursor=a%2Bb', `demo/answers/unanswered?cursor=${'a'.repeat(2049)}`,
    `demo/answers/unanswered?cursor=${cursor({ count: 1 })}`, `demo/answers/unanswered?cursor=${cursor([0, 'key'])}`,
    `demo/answers/unanswered?cursor=${cursor([1.5, 'key'])}`, `demo/answers/unanswered?cursor=${cursor([1, 7])}`,
    `demo/answers/unanswered?cursor=${cursor([1, 'k'.repeat(801)])}`, 'demo/answers/unanswered?cursor=bm90LWpzb24'
  ]
  for (const path of bad) {
    const res = await operator(app, 'GET', path)
    t.equal(res.statusCode, 400, path.slice(0, 80))
    t.match(res.json(), { statusCode: 400, error: 'Bad Request', message: String })
  }
  t.match((await operator(app, 'GET', `demo/answers/unanswered?cursor=${cursor([1, 'key'])}`)).json(), { message: undefined }, 'a well-formed cursor is fine')
  t.equal((await operator(app, 'GET', 'demo/answers/unanswered?limit=100&window=7d')).statusCode, 200, 'the bounds themselves')
  t.match((await operator(app, 'GET', 'demo/answers/unanswered?cursor=bm90LWpzb24')).json().message, /not a cursor this API gave/)

  for (const path of ['nobody/answers', 'nobody/answers/unanswered']) {
    const res = await operator(app, 'GET', path)
    t.equal(res.statusCode, 404)
    t.strictSame(res.json(), { statusCode: 404, error: 'Not Found', message: 'unknown agent "nobody"' })
  }
  for (const path of ['demo/answers', 'demo/answers/unanswered']) {
    for (const headers of [{}, { authorization: 'Bearer wrong-key-0123456789' }] as Array<Record<string, string>>) {
      const res = await operator(app, 'GET', path, undefined, headers)
      t.equal(res.statusCode, 401, path)
      t.equal(res.headers['www-authenticate'], 'Bearer')
    }
  }
})

t.test('a conversation store without an answer log: the routes say so', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(operatorApi, { apiKey: OPERATOR_KEY, agentIds: ['demo'], inbox: {} as Inbox })
  for (const path of ['demo/answers', 'demo/answers/unanswered']) {
    const res = await operator(app, 'GET', path)
    t.equal(res.statusCode, 404)
    t.strictSame(res.json(), { statusCode: 404, error: 'Not Found', message: 'this gateway\'s conversation store keeps no answer log' })
  }
})

t.test('a proxied agent\'s answers count when its upstream attaches its own verdict', async (t) => {
  const upstream = await startUpstream()
  t.teardown(() => upstream.close())
  const { base } = await startGateway(t, { OPERATOR_API_KEY: OPERATOR_KEY }, { agents: [{ id: 'shop', upstream: { url: upstream.base } }] })
  const ask = async (text: string): Promise<void> => {
    const response = await fetch(`${base}/a2a/shop`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI },
      body: rpc('SendMessage', { message: userMessage(text) })
    })
    t.ok((await response.json() as { result?: unknown }).result, text)
  }
  await ask('enveloped hello')
  await ask('unknown: where is the moon shop?')
  await ask('unknown: the moon shop, where is it')
  await ask('plain hello')
  const get = async (path: string): Promise<any> => await (await fetch(`${base}/api/v1/agents/shop/${path}`, { headers: { authorization: `Bearer ${OPERATOR_KEY}` } })).json()
  t.same((await get('answers')).totals, { answered: 1, partial: 0, unanswered: 2, unclear: 0, notAssessed: 0 },
    'the upstream\'s verdicts; a reply without one is not an answer the log can count')
  t.match((await get('answers/unanswered')).questions, [{ key: 'moon shop unknown', count: 2, text: 'unknown: the moon shop, where is it' }])
})
