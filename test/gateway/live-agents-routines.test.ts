/**
 * A routine waiting for input when its agent changes at runtime (docs/routines.md, "When the agent changes"): a new
 * version that still declares the routine continues it; one that drops it ends the waiting task (CANCELED) with a
 * clear, kind reply, and the conversation starts afresh; the inbox shows such a conversation without the routine.
 * And the metrics label a published agent's requests with its id (the agents served now), not `unknown`.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { AUTH, Client, gateway, operator, textOf } from '../fixtures/conversation-gateway.js'
import { packageRoot } from '../../src/gateway/package-root.js'

type Json = any

async function diner (): Promise<Json> {
  const demo = JSON.parse(await readFile(join(packageRoot(), 'examples/demo/agent.json'), 'utf8')) as Json
  return { id: 'diner', name: 'Diner', description: 'Books tables.', routines: demo.routines }
}

async function replace (app: Awaited<ReturnType<typeof gateway>>, definition: Json, version: number): Promise<number> {
  const response = await app.inject({
    method: 'PUT',
    url: '/api/v1/agents/diner',
    headers: { ...AUTH, 'content-type': 'application/json', 'if-match': `"${version}"` },
    payload: JSON.stringify(definition)
  })
  return response.statusCode
}

t.test('the new version keeps the routine: it continues; drops it: the task ends, kindly, and the inbox still shows the conversation', async (t) => {
  const app = await gateway(t, { env: { METRICS_TOKEN: 'metrics-token-0123456789' } })
  const definition = await diner()
  t.equal((await app.inject({ method: 'POST', url: '/api/v1/agents', headers: { ...AUTH, 'content-type': 'application/json' }, payload: JSON.stringify(definition) })).statusCode, 201)
  const client = new Client(t, app, { agent: 'diner' })

  const kept = await client.task('I would like to book a table')
  t.equal(kept.status.state, 'TASK_STATE_INPUT_REQUIRED')
  t.equal(await replace(app, { ...definition, name: 'Diner 2' }, 1), 200)
  const continued = await client.task('date=2026-12-24, partySize=2', { taskId: kept.id, contextId: kept.contextId })
  t.equal(continued.status.state, 'TASK_STATE_COMPLETED', 'a routine the new version still declares continues')

  const waiting = await client.task('I would like to book a table')
  t.equal(waiting.status.state, 'TASK_STATE_INPUT_REQUIRED')
  t.equal(await replace(app, { ...definition, routines: [] }, 2), 200)
  const view = await operator(app, 'GET', `diner/conversations/${waiting.contextId}`)
  t.equal(view.statusCode, 200, 'the inbox shows the conversation')
  t.equal(view.json().routine, undefined, 'without the routine its agent no longer declares')
  const ended = await client.task('date=2026-12-24, partySize=2', { taskId: waiting.id, contextId: waiting.contextId })
  t.equal(ended.status.state, 'TASK_STATE_CANCELED')
  t.match(textOf(ended.status.message), /^Sorry, I can no longer finish "Book a table": this agent has changed .* Nothing was done\./)
  const next = await client.send('hello again', { contextId: waiting.contextId })
  t.ok(next.message ?? next.task, 'the conversation goes on afresh')
  const metrics = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer metrics-token-0123456789' } })
  t.match(metrics.body, /a2a_converse_requests_total\{[^}]*agent="diner"[^}]*method="SendMessage"[^}]*\} \d+/, 'labelled with its id')
})
