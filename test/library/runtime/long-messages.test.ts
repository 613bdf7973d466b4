/**
 * What the runtime reads of a long message (issue 41, finding 9): at most maxReadChars characters of its text
 * (MAX_READ_CHARS, 4,096 by default) are searched, matched against routine triggers and slot rules and kept in the
 * conversation; the task keeps the whole message. Before, the whole text was searched: a 1 MB message cost ~150 ms
 * of the event loop and starved every other caller (bench/big-bodies.ts measures that).
 */
import t from 'tap'
import { fileURLToPath } from 'node:url'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { Client, gateway, operator } from '../../fixtures/conversation-gateway.js'
import { conversationExecutor } from '../../../packages/a2a-converse/src/runtime/conversation-executor.js'
import { knowledgeExecutor } from '../../../packages/a2a-converse/src/runtime/knowledge-executor.js'
import { KnowledgeBase } from '../../../packages/a2a-converse/src/runtime/knowledge-base.js'
import { MemoryConversationStore } from '../../../packages/a2a-converse/src/stores/memory-conversation-store.js'
import { InMemoryTaskStore } from '@a2a-js/sdk/server'
import { DEFAULT_MAX_READ_CHARS, readableParts } from '../../../packages/a2a-converse/src/runtime/slot-input.js'
import { InvalidOptionError } from '../../../packages/a2a-converse/src/core/errors.js'
import { loadConfig } from '../../../src/gateway/config.js'

const AGENTS_FILE = fileURLToPath(new URL('../../fixtures/conversation-agents.json', import.meta.url))
const LIMIT = 200
const filler = (length: number): string => 'lorem ipsum dolor '.repeat(Math.ceil(length / 18)).slice(0, length)

t.test('the default is 4,096 characters, and MAX_READ_CHARS sets it', async (t) => {
  t.equal(DEFAULT_MAX_READ_CHARS, 4096)
  t.equal(loadConfig({}).maxReadChars, 4096)
  t.equal(loadConfig({ MAX_READ_CHARS: '64' }).maxReadChars, 64)
  t.throws(() => loadConfig({ MAX_READ_CHARS: '0' }), /MAX_READ_CHARS/)
})

t.test('readableParts cuts text parts to the budget together, in order, and leaves other parts alone', async (t) => {
  const data = { data: { date: '2026-12-24' } }
  t.strictSame(readableParts([{ text: 'abcdef' }, data, { text: 'ghij' }, { text: 'kl' }], 8), [{ text: 'abcdef' }, data, { text: 'gh' }, { text: '' }])
  const whole = [{ text: 'abc' }]
  t.equal(readableParts(whole, 3)[0], whole[0], 'a part within the budget is the same object')
})

t.test('a routine trigger past the limit is not read; within it, it starts the routine', async (t) => {
  const app = await gateway(t, { env: { MAX_READ_CHARS: String(LIMIT) } })
  const client = new Client(t, app)
  const late = await client.send(`${filler(LIMIT)} I would like to book a table`)
  t.ok(late.message, 'answered as a question (no routine, no task)')
  const early = await client.task(`I would like to book a table ${filler(LIMIT * 10)}`)
  t.equal(early.status.state, 'TASK_STATE_INPUT_REQUIRED', 'the routine started')
  const stored = await client.getTask(early.id)
  t.equal(stored.history[0].parts[0].text.length, 'I would like to book a table '.length + LIMIT * 10, 'the task keeps the whole message')
})

t.test('slot pairs past the limit are not read', async (t) => {
  const app = await gateway(t, { env: { MAX_READ_CHARS: String(LIMIT) } })
  const client = new Client(t, app)
  const task = await client.task('I would like to book a table')
  const next = await client.task(undefined, { taskId: task.id, contextId: task.contextId, parts: [{ text: filler(LIMIT) }, { text: 'date=2026-12-24, partySize=4' }] })
  t.equal(next.status.state, 'TASK_STATE_INPUT_REQUIRED', 'still waiting: nothing was read')
  const done = await client.task(undefined, { taskId: task.id, contextId: task.contextId, parts: [{ text: 'date=2026-12-24, partySize=4' }, { text: filler(LIMIT * 10) }] })
  t.equal(done.status.state, 'TASK_STATE_COMPLETED')
})

t.test('a knowledge question at the start of a long message is answered; the conversation keeps what was read', async (t) => {
  const app = await gateway(t, { env: { MAX_READ_CHARS: String(LIMIT) } })
  const client = new Client(t, app)
  const long = `When are you open on Saturday? ${filler(1_000_000)}`
  const reply = await client.send(long)
  t.match(reply.message.parts[0].text, /Saturday from 10 am/)
  const view = await operator(app, 'GET', `demo/conversations/${reply.message.contextId}`)
  const userTurn = view.json().turns[0]
  t.equal(userTurn.role, 'user')
  t.equal(userTurn.text, long.slice(0, LIMIT).trim(), 'the first MAX_READ_CHARS characters')
})

t.test('the knowledge executor (executor "knowledge") reads as far as the limit too', async (t) => {
  const app = await gateway(t, { env: { MAX_READ_CHARS: String(LIMIT), AGENTS_FILE } })
  const faq = new Client(t, app, { agent: 'faq' })
  const early = await faq.send(`When are you open on Saturday? ${filler(LIMIT * 5)}`)
  t.match(early.message.parts[0].text, /Saturday from 10 am/)
  const late = await faq.send(`${filler(LIMIT)} When are you open on Saturday?`)
  t.notMatch(late.message.parts[0].text, /Saturday from 10 am/, 'a question past the limit is not read')
})

t.test('what the conversation keeps of long messages holds no copy of the rest (the heap after 150 one-MB turns)', async (t) => {
  // A cut made with a plain slice keeps the whole original string alive (V8's sliced strings): 150 MB here.
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  const app = await gateway(t)
  const client = new Client(t, app)
  gc()
  const before = process.memoryUsage().heapUsed
  for (let turn = 0; turn < 150; turn++) await client.send(`When are you open on Saturday? ${turn} ${filler(1_000_000)}`)
  gc()
  const grown = process.memoryUsage().heapUsed - before
  t.ok(grown < 40_000_000, `the heap grew by ${(grown / 1e6).toFixed(1)} MB for 150 conversations (not 150 MB)`)
})

t.test('maxReadChars must be a positive integer', async (t) => {
  const knowledgeBase = new KnowledgeBase({ documents: [] })
  const store = new MemoryConversationStore()
  const taskStore = new InMemoryTaskStore()
  for (const maxReadChars of [0, -1, 1.5, Number.NaN]) {
    t.throws(() => conversationExecutor({ agentId: 'a', knowledgeBase, store, taskStore, maxReadChars }), InvalidOptionError)
    t.throws(() => knowledgeExecutor({ knowledgeBase, maxReadChars }), InvalidOptionError)
  }
})
