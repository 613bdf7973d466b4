/**
 * Memory mode levels off (issue 10, defect 3): routine turns with fresh contextIds, each leaving a task, keep at
 * most MEMORY_MAX_TASKS tasks per agent and MEMORY_MAX_CONVERSATIONS conversations; the oldest finished task goes
 * first, open tasks stay (issue 23: open work is never evicted, test/gateway/caller-bounds.test.ts), and an
 * evicted task is -32001 like any unknown one. The caller has a key, so that ListTasks counts every task of the agent
 * (a walk-in lists one conversation only).
 */
import t from 'tap'
import { ALICE_KEY, API_KEYS } from '../fixtures/auth.js'
import { Client, gateway } from '../fixtures/conversation-gateway.js'

const CAP = 20

t.test('fresh contexts: the number of tasks and conversations stays at the caps, whatever the number of turns', async (t) => {
  const app = await gateway(t, { env: { MEMORY_MAX_TASKS: String(CAP), MEMORY_MAX_CONVERSATIONS: String(CAP), A2A_API_KEYS: API_KEYS } })
  const client = new Client(t, app, { credential: ALICE_KEY })
  const metadata = { padding: 'x'.repeat(50_000) }
  const first: string[] = []
  let lastTask = ''
  for (let turn = 0; turn < 3 * CAP; turn++) {
    const contextId = `fresh-${turn}`
    // The last five routines wait for input (open work, never evicted); the others finish at once (a typed call).
    const reply = turn >= 3 * CAP - 5
      ? await client.call('SendMessage', { message: { messageId: `m-${turn}`, contextId, role: 'ROLE_USER', parts: [{ text: 'book a table' }], metadata } })
      : await client.call('SendMessage', {
        message: {
          messageId: `m-${turn}`,
          contextId,
          role: 'ROLE_USER',
          parts: [{ text: 'call' }],
          extensions: [client.headers()['a2a-extensions']],
          metadata: { ...metadata, [client.headers()['a2a-extensions']]: { call: { toolName: 'book_table', arguments: { date: '2026-12-24', partySize: 2 } } } }
        }
      })
    lastTask = reply.result.task.id
    if (turn < 4) first.push(lastTask)
    const listed = await client.call('ListTasks', { pageSize: 1 })
    if (listed.result.totalSize > CAP) t.fail(`${listed.result.totalSize} tasks after turn ${turn}`)
  }
  t.equal((await client.call('ListTasks', { pageSize: 1 })).result.totalSize, CAP, 'levels off at MEMORY_MAX_TASKS')
  const byState = await client.call('ListTasks', { status: 'TASK_STATE_INPUT_REQUIRED', pageSize: 100 })
  t.equal(byState.result.totalSize, 5, 'finished tasks went first: every open one is kept')
  for (const id of first) {
    const evicted = await client.call('GetTask', { id })
    t.equal(evicted.error?.code, -32001, 'an evicted task is unknown (-32001)')
  }
  t.equal((await client.getTask(lastTask)).id, lastTask, 'the latest task is there')
  const operator = await app.inject({ method: 'GET', url: `/api/v1/agents/demo/conversations/${encodeURIComponent('alice/fresh-0')}`, headers: { authorization: 'Bearer operator-key-0123456789' } })
  t.equal(operator.statusCode, 404, 'the oldest conversation was evicted (MEMORY_MAX_CONVERSATIONS)')
  const latest = await app.inject({ method: 'GET', url: `/api/v1/agents/demo/conversations/${encodeURIComponent(`alice/fresh-${3 * CAP - 1}`)}`, headers: { authorization: 'Bearer operator-key-0123456789' } })
  t.equal(latest.statusCode, 200)
})

t.test('MEMORY_MAX_TASK_BYTES: large bodies level off by size, the earliest finished first', async (t) => {
  const app = await gateway(t, { env: { MEMORY_MAX_TASK_BYTES: String(4 * 65_536), A2A_API_KEYS: API_KEYS } })
  const client = new Client(t, app, { credential: ALICE_KEY })
  const uri = client.headers()['a2a-extensions']
  const ids: string[] = []
  for (let turn = 0; turn < 12; turn++) {
    const call = { toolName: 'book_table', arguments: { date: '2026-12-24', partySize: 2 } }
    const reply = await client.call('SendMessage', {
      message: { messageId: `b-${turn}`, contextId: `bytes-${turn}`, role: 'ROLE_USER', parts: [{ text: 'x'.repeat(60_000) }], extensions: [uri], metadata: { [uri]: { call } } }
    })
    ids.push(reply.result.task.id)
  }
  const listed = await client.call('ListTasks', { pageSize: 100 })
  t.ok(listed.result.totalSize >= 3 && listed.result.totalSize <= 4, `about four 60 KB tasks fit in 256 KiB (${listed.result.totalSize as number})`)
  t.equal((await client.call('GetTask', { id: ids[0] })).error?.code, -32001, 'the earliest finished went')
  t.equal((await client.getTask(ids[11])).id, ids[11])
})
