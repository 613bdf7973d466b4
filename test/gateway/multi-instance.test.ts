/**
 * Two gateway processes (the real `npm start` entry) on two ports and one PostgreSQL database behave as one
 * service: a routine moves between them by taskId, either one reads the other's tasks (each agent its own),
 * a takeover through one applies on the other, a person's reply posted on one reaches a stream open on the other
 * (with the envelope only where the stream asked for the extension), concurrent turns of one conversation spread
 * over both are all kept, and what one acknowledged before it was SIGKILLed is there for the other.
 */
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { rpc, URI, userMessage } from '../fixtures/gateway-helpers.js'
import { ROOT, startMain, within, type GatewayProcess } from '../fixtures/gateway-process.js'
import { readSse } from '../fixtures/sse-reader.js'
import { testSchema } from '../fixtures/test-schema.js'

const url = process.env.TEST_DATABASE_URL

type Json = Record<string, any>

const KEY = 'operator-key-for-the-multi-instance-test'
const AUTH = { authorization: `Bearer ${KEY}` }
/** Parallel turns per round of the concurrency test (the operator view shows the last 20 turns: 10 pairs). */
const PARALLEL_TURNS = 10

function headers (active = true): Record<string, string> {
  return { 'content-type': 'application/json', 'a2a-version': '1.0', ...(active ? { 'a2a-extensions': URI } : {}) }
}

/** One JSON-RPC call; the whole response body. */
async function call (base: string, method: string, params: Json, agent = 'demo'): Promise<Json> {
  const response = await fetch(`${base}/a2a/${agent}`, { method: 'POST', headers: headers(), body: rpc(method, params) })
  if (response.status !== 200) throw new Error(`${method}: HTTP ${response.status}`)
  return await response.json() as Json
}

/** SendMessage's result, failing on a JSON-RPC error. */
async function send (base: string, text: string, extra: Json = {}, agent = 'demo'): Promise<Json> {
  const body = await call(base, 'SendMessage', { message: userMessage(text, extra) }, agent)
  if (body.error !== undefined) throw new Error(`SendMessage "${text}": ${JSON.stringify(body.error)}`)
  return body.result
}

async function operator (base: string, method: 'GET' | 'POST', path: string, body?: Json) {
  const response = await fetch(`${base}/api/v1/agents/demo/conversations/${path}`, {
    method,
    headers: body === undefined ? AUTH : { ...AUTH, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: response.status, body: await response.json() as Json }
}

const envelope = (message: Json): Json => message?.metadata?.[URI]
const textOf = (message: Json): string => message.parts.filter((part: Json) => typeof part.text === 'string').map((part: Json) => part.text).join('\n')

/** The demo agent and a second one (same documents and routines), both in one AGENTS_FILE. */
async function agentsFile (t: Test): Promise<string> {
  const demo = JSON.parse(await readFile(join(ROOT, 'examples/demo/agent.json'), 'utf8')) as Json
  demo.documents = join(ROOT, 'examples/demo/documents')
  const dir = t.testdir({ 'agents.json': JSON.stringify([demo, { ...demo, id: 'shop', name: 'Second shop' }]) })
  return join(dir, 'agents.json')
}

if (url === undefined) {
  t.test('two gateway instances on one database', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  // Every instance is the real entry run through tap's TypeScript loader: allow for slow, busy machines.
  t.setTimeout(300_000)

  const schema = testSchema(t, url)
  const env = { DATABASE_URL: url, DATABASE_SCHEMA: schema, OPERATOR_API_KEY: KEY, AGENTS_FILE: await agentsFile(t), LOG_LEVEL: 'info' }
  // Started together: both migrate the new schema at once.
  const a: GatewayProcess = startMain(t, env)
  const b: GatewayProcess = startMain(t, env)
  const [A, B] = await Promise.all([a.listening(), b.listening()])

  t.test('both started on the fresh schema and are ready', async (t) => {
    for (const base of [A, B]) {
      const ready = await fetch(`${base}/health/ready`)
      t.same([ready.status, await ready.json()], [200, { status: 'ready', checks: { database: 'ok' } }])
    }
  })

  t.test('a routine started on A, continued on B by taskId, finished on A', async (t) => {
    const first = (await send(A, "I'd like to book a table")).task
    t.equal(first.status.state, 'TASK_STATE_INPUT_REQUIRED')
    t.match(envelope(first.status.message).routine, { toolName: 'book_table', status: 'waiting_for_input' })

    const second = (await send(B, 'date=2026-12-24', { taskId: first.id, contextId: first.contextId })).task
    t.equal(second.id, first.id, 'B continues the same task')
    t.equal(second.status.state, 'TASK_STATE_INPUT_REQUIRED')
    t.same(envelope(second.status.message).routine.pendingInput.map((slot: Json) => slot.key), ['partySize', 'notes'],
      'B knows the routine A started: only partySize is still required')

    const done = (await send(A, 'partySize=4', { taskId: first.id })).task
    t.equal(done.status.state, 'TASK_STATE_COMPLETED', 'A finishes it with what B recorded')
    t.match(done.artifacts[0].parts[0].data, { toolName: 'book_table', values: { date: '2026-12-24', partySize: 4 } })
    t.same(done.history.map((message: Json) => message.role),
      ['ROLE_USER', 'ROLE_AGENT', 'ROLE_USER', 'ROLE_AGENT', 'ROLE_USER', 'ROLE_AGENT'], 'every turn of both in the history')
  })

  t.test('GetTask and ListTasks on B see the tasks A made; each agent only its own', async (t) => {
    const demoTask = (await send(A, 'book a table')).task
    const shopTask = (await send(A, 'book a table', {}, 'shop')).task

    const got = (await call(B, 'GetTask', { id: demoTask.id })).result
    t.equal(got.id, demoTask.id)
    t.equal(got.status.state, 'TASK_STATE_INPUT_REQUIRED')
    t.equal(envelope(got.status.message).routine.status, 'waiting_for_input', 'with its envelope')
    const demoIds = (await call(B, 'ListTasks', { pageSize: 100, contextId: demoTask.contextId })).result.tasks.map((task: Json) => task.id)
    t.ok(demoIds.includes(demoTask.id), "demo's ListTasks on B lists A's task")
    t.notOk(demoIds.includes(shopTask.id), "not the other agent's")
    const shopIds = (await call(B, 'ListTasks', { pageSize: 100, contextId: shopTask.contextId }, 'shop')).result.tasks.map((task: Json) => task.id)
    t.same(shopIds, [shopTask.id], "shop's ListTasks on B: its one task")

    t.equal((await call(B, 'GetTask', { id: shopTask.id })).error?.code, -32001, "demo cannot read shop's task")
    t.equal((await call(B, 'GetTask', { id: demoTask.id }, 'shop')).error?.code, -32001, "nor shop demo's")
    t.equal((await call(B, 'GetTask', { id: shopTask.id }, 'shop')).result.id, shopTask.id)
  })

  t.test('takeover through B applies on A; a reply posted on A reaches SubscribeToTask streams on B', async (t) => {
    const contextId = randomUUID()
    const answered = await send(A, 'What are your opening hours?', { contextId })
    t.ok(answered.message, 'a conversation with the agent')

    const takeover = await operator(B, 'POST', `${contextId}/takeover`)
    t.equal(takeover.status, 200)
    t.equal(takeover.body.ownership, 'human_owned')

    const held = (await send(A, 'Is a person there?', { contextId })).task
    t.equal(held.status.state, 'TASK_STATE_WORKING', "A's reply is the held task")
    t.same(envelope(held.status.message).ownership, { state: 'human_owned', suppressed: true }, 'suppressed: A knows of the takeover')
    t.equal((await operator(A, 'GET', contextId)).body.ownership, 'human_owned', "A's operator view too")

    // Two streams on B: one asked for the extension, one did not.
    const open = async (active: boolean) => {
      const response = await fetch(`${B}/a2a/demo`, { method: 'POST', headers: headers(active), body: rpc('SubscribeToTask', { id: held.id }) })
      const stream = readSse(response)
      await stream.waitFor((frame) => frame.result?.task?.status?.state === 'TASK_STATE_WORKING', 'the task')
      return { response, stream }
    }
    const active = await open(true)
    const plain = await open(false)
    t.equal(active.response.headers.get('a2a-extensions'), URI, 'the active stream echoes the extension')
    t.equal(plain.response.headers.get('a2a-extensions'), null)

    const posted = await operator(A, 'POST', `${contextId}/messages`, { text: 'Hi, Sam here. We open at 9.' })
    t.equal(posted.status, 201)
    t.equal(posted.body.taskId, held.id, 'into the held task')

    const isReply = (frame: Json) => frame.result?.statusUpdate?.status?.message?.parts?.[0]?.text === 'Hi, Sam here. We open at 9.'
    const reply = (await active.stream.waitFor(isReply, 'the reply')).result.statusUpdate
    t.equal(reply.taskId, held.id)
    t.equal(reply.status.state, 'TASK_STATE_WORKING')
    t.equal(reply.status.message.role, 'ROLE_AGENT')
    t.match(envelope(reply.status.message), { author: 'human', ownership: { state: 'human_owned', suppressed: false } },
      'with the envelope: author human')
    t.ok(reply.status.message.extensions.includes(URI))
    const bare = (await plain.stream.waitFor(isReply, 'the reply')).result.statusUpdate
    t.equal(envelope(bare.status.message), undefined, 'no envelope on the stream that did not ask for it')
    t.notOk(JSON.stringify(plain.stream.frames).includes('"author"'), 'nowhere in that stream')

    // Release through B ends the held task: both streams on B end with it.
    const release = await operator(B, 'POST', `${contextId}/release`)
    t.equal(release.body.ownership, 'ai_owned')
    for (const { stream } of [active, plain]) {
      t.equal(await stream.ended, '', 'the stream ends on a frame boundary')
      t.equal(stream.frames.at(-1)?.result?.statusUpdate?.status?.state, 'TASK_STATE_COMPLETED')
    }
    t.equal((await call(A, 'GetTask', { id: held.id })).result.status.state, 'TASK_STATE_COMPLETED')
    t.ok((await send(B, 'What are your opening hours?', { contextId })).message, 'the agent answers again')
  })

  t.test('CancelTask through A on a held task ends a SubscribeToTask stream open on B', async (t) => {
    const contextId = randomUUID()
    await send(A, 'What are your opening hours?', { contextId })
    t.equal((await operator(A, 'POST', `${contextId}/takeover`)).status, 200)
    const held = (await send(A, 'Is a person there?', { contextId })).task
    t.equal(held.status.state, 'TASK_STATE_WORKING')
    const response = await fetch(`${B}/a2a/demo`, { method: 'POST', headers: headers(), body: rpc('SubscribeToTask', { id: held.id }) })
    const stream = readSse(response)
    await stream.waitFor((frame) => frame.result?.task?.status?.state === 'TASK_STATE_WORKING', 'the task')
    const canceled = await call(A, 'CancelTask', { id: held.id })
    t.equal(canceled.result.status.state, 'TASK_STATE_CANCELED')
    t.equal(await stream.ended, '', 'the stream on B ends on a frame boundary')
    t.equal(stream.frames.at(-1)?.result?.statusUpdate?.status?.state, 'TASK_STATE_CANCELED', 'with the final status')
    t.equal((await call(B, 'GetTask', { id: held.id })).result.status.state, 'TASK_STATE_CANCELED')
  })

  t.test('concurrent turns of one conversation, alternating A and B: every turn is kept', async (t) => {
    const contextId = randomUUID()
    for (const round of [1, 2]) {
      const texts = Array.from({ length: PARALLEL_TURNS }, (_, index) => `What are your opening hours? (round ${round}, turn ${index})`)
      const results = await Promise.all(texts.map(async (text, index) => await send(index % 2 === 0 ? A : B, text, { contextId })))
      t.ok(results.every((result) => result.message?.contextId === contextId), `round ${round}: every turn answered`)

      const view = await operator(round === 1 ? A : B, 'GET', contextId)
      t.equal(view.status, 200)
      const turns: Json[] = view.body.turns
      t.equal(turns.length, 2 * PARALLEL_TURNS, `round ${round}: the view holds ${2 * PARALLEL_TURNS} turns`)
      t.same(turns.filter((turn) => turn.role === 'user').map((turn) => turn.text).sort(), [...texts].sort(),
        `round ${round}: every user turn once, none lost`)
      t.ok(turns.every((turn, index) => turn.role === (index % 2 === 0 ? 'user' : 'agent')),
        'each turn with its reply: updates never interleaved')
    }
  })

  t.test('SIGKILL of A after it acknowledged a turn: B carries the conversation on, nothing acknowledged is lost', async (t) => {
    const first = (await send(A, 'book a table')).task
    const acknowledged = (await send(A, 'date=2026-12-31', { taskId: first.id })).task
    t.equal(acknowledged.status.state, 'TASK_STATE_INPUT_REQUIRED', 'A acknowledged the date')
    a.kill('SIGKILL')
    t.same(await within(a.exited, 30_000), { code: null, signal: 'SIGKILL' })

    const done = (await send(B, 'partySize=2', { taskId: first.id })).task
    t.equal(done.status.state, 'TASK_STATE_COMPLETED', 'B completes the routine')
    t.match(done.artifacts[0].parts[0].data.values, { date: '2026-12-31', partySize: 2 }, 'with the date A acknowledged')
    t.same(done.history.map((message: Json) => textOf(message).split('\n')[0]).filter((_: string, index: number) => index % 2 === 0),
      ['book a table', 'date=2026-12-31', 'partySize=2'], 'every user turn in the task')
  })

  t.test('B drains and exits cleanly', async (t) => {
    b.kill('SIGTERM')
    t.same(await within(b.exited, 60_000), { code: 0, signal: null })
    t.same(b.lines().filter((line) => line.level >= 50), [], 'no error lines')
  })
}
