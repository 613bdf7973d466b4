/**
 * MAX_BYTES_IN_FLIGHT_PER_CALLER on the gateway's HTTP doors (src/gateway/caller-share.ts; issue 41, finding 9): a
 * caller's request past its share waits, its body unread, until the caller's earlier request is done; another
 * caller goes on meanwhile; a waiting client that leaves frees its place. The agent's executor holds each turn until
 * the test lets it go, so what runs at once is seen, not timed.
 */
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { AgentEvent, type AgentExecutor } from '@a2a-js/sdk/server'
import { ALICE_KEY, API_KEYS, BOB_KEY } from '../fixtures/auth.js'
import { SEED_HEADERS, startGateway } from '../fixtures/gateway-helpers.js'

/** An executor whose turns wait for `release(text)`; `started` lists the texts whose turn began. */
function heldExecutor () {
  const started: string[] = []
  const waits = new Map<string, () => void>()
  const executor: AgentExecutor = {
    async execute (context, bus) {
      const text = context.userMessage.parts[0]?.content?.$case === 'text' ? context.userMessage.parts[0].content.value : ''
      started.push(text)
      await new Promise<void>((resolve) => waits.set(text, resolve))
      bus.publish(AgentEvent.message({ messageId: randomUUID(), contextId: context.contextId, role: 2, parts: [{ content: { $case: 'text', value: `done ${text}` }, mediaType: 'text/plain', filename: '', metadata: undefined }], metadata: undefined, extensions: [], referenceTaskIds: [], taskId: '' } as never))
      bus.finished()
    },
    async cancelTask () {}
  }
  return { executor, started, release: (text: string) => { (waits.get(text) as () => void)() } }
}

/** Until `check` holds (each turn of the loop lets I/O run); fails the wait after `tries`. */
async function until (check: () => boolean, tries = 500): Promise<void> {
  for (let attempt = 0; attempt < tries && !check(); attempt++) await new Promise((resolve) => setTimeout(resolve, 5))
  if (!check()) throw new Error('the condition never held')
}

/** A few rounds of the event loop with real I/O: time enough for a request that is let in to reach its executor. */
const settle = async (): Promise<void> => { for (let round = 0; round < 20; round++) await new Promise((resolve) => setTimeout(resolve, 5)) }

t.test('one caller\'s second request waits for its first; another caller does not; a waiting client that leaves frees its place', async (t) => {
  const held = heldExecutor()
  // Each request here is about 300 bytes of body + 1 KiB: one fits in 1,500, two do not.
  const { base } = await startGateway(t, { A2A_API_KEYS: API_KEYS, MAX_BYTES_IN_FLIGHT_PER_CALLER: '1500' }, {
    agents: [{ id: 'held', name: 'Held', description: 'waits for the test', executor: 'held' }],
    executors: { held: () => held.executor }
  })
  const send = (key: string, text: string, signal?: AbortSignal) => fetch(`${base}/a2a/held`, {
    method: 'POST',
    headers: { ...SEED_HEADERS, authorization: `Bearer ${key}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] } } }),
    signal
  })
  const first = send(ALICE_KEY, 'alice 1')
  await until(() => held.started.includes('alice 1'))
  const second = send(ALICE_KEY, 'alice 2')
  const leaving = new AbortController()
  const third = send(ALICE_KEY, 'alice 3', leaving.signal).catch((error: Error) => error)
  const bob = send(BOB_KEY, 'bob 1')
  await until(() => held.started.includes('bob 1'))
  t.same(held.started, ['alice 1', 'bob 1'], 'bob runs while alice\'s second and third wait')
  leaving.abort()
  t.equal((await third as Error).name, 'AbortError')
  held.release('alice 1')
  t.equal((await (await first).json() as any).result.message.parts[0].text, 'done alice 1')
  await until(() => held.started.includes('alice 2'))
  await settle()
  t.same(held.started, ['alice 1', 'bob 1', 'alice 2'], 'alice\'s second runs once her first is done; the one that left never runs')
  held.release('alice 2')
  held.release('bob 1')
  t.equal((await second).status, 200)
  t.equal((await bob).status, 200)
})

t.test('0 switches the share off: a walk-in\'s three requests run at once', async (t) => {
  const held = heldExecutor()
  const { base } = await startGateway(t, { MAX_BYTES_IN_FLIGHT_PER_CALLER: '0' }, {
    agents: [{ id: 'held', name: 'Held', description: 'waits for the test', executor: 'held' }],
    executors: { held: () => held.executor }
  })
  const send = (text: string) => fetch(`${base}/a2a/held`, {
    method: 'POST',
    headers: SEED_HEADERS,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] } } })
  })
  const replies = ['one', 'two', 'three'].map(send)
  await until(() => held.started.length === 3)
  t.same([...held.started].sort(), ['one', 'three', 'two'], 'all three run at once')
  for (const text of ['one', 'two', 'three']) held.release(text)
  for (const reply of replies) t.equal((await reply).status, 200)
})
