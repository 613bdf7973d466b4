/**
 * The conversation executor's own answer to a retry (packages/a2a-converse/src/runtime/conversation-executor.ts, repeatPlan): the copy
 * that reached the executor because the dispatcher's look-up (replayOf) did not see the first turn yet. A
 * conversation store whose `get` sees nothing makes every retry take that path. It publishes the first reply (the
 * kept Message, or the task holding it), says so for a copy with other content, answers turns an earlier version
 * stored (no digest, no kept reply), and names a task the store no longer keeps. The dispatcher's path with such
 * old turns is checked too.
 */
import t from 'tap'
import { randomUUID } from 'node:crypto'
import type { Task } from '@a2a-js/sdk'
import type { ServerCallContext } from '@a2a-js/sdk/server'
import { MemoryConversationStore } from '../../../packages/a2a-converse/src/stores/memory-conversation-store.js'
import type { ConversationState } from '../../../packages/a2a-converse/src/stores/conversation-store.js'
import { BoundedMemoryTaskStore } from '../../../packages/a2a-converse/src/stores/memory-task-store.js'
import { Client, gateway, textOf, URI } from '../../fixtures/conversation-gateway.js'

type Json = any

/** Sees no conversation through `get`: the dispatcher's look-up misses, the executor decides under the lock. */
class UnseenConversationStore extends MemoryConversationStore {
  override async get (): Promise<ConversationState | undefined> {
    return undefined
  }
}

/** Forgets the tasks named in `forgotten` for loads (as if evicted). */
class ForgetfulTaskStore extends BoundedMemoryTaskStore {
  readonly forgotten = new Set<string>()
  override async load (taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    return this.forgotten.has(taskId) ? undefined : await super.load(taskId, context)
  }
}

const bytes = (value: Json): string => JSON.stringify(value)

function booking (contextId: string, messageId = randomUUID()): Json {
  const call = { toolName: 'book_table', arguments: { date: '2026-12-24', partySize: 4 } }
  return { messageId, contextId, role: 'ROLE_USER', parts: [{ data: call }], extensions: [URI], metadata: { [URI]: { call } } }
}

t.test('the executor publishes the first reply to a copy the dispatcher did not catch', async (t) => {
  const taskStore = new ForgetfulTaskStore()
  const client = new Client(t, await gateway(t, { conversations: new UnseenConversationStore(), taskStores: { demo: taskStore } }))
  const question = { messageId: randomUUID(), contextId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'When are you open on Saturday?' }] }
  const first = await client.call('SendMessage', { message: question })
  t.equal(bytes((await client.call('SendMessage', { message: question })).result), bytes(first.result), 'the kept Message, byte for byte')

  const other = await client.call('SendMessage', { message: { ...question, parts: [{ text: 'Something else' }] } })
  t.equal(textOf(other.result.message), `Message ${question.messageId as string} was already received and answered; this copy has other content.`)

  const call = booking(randomUUID())
  const booked = (await client.call('SendMessage', { message: call })).result.task
  const again = (await client.call('SendMessage', { message: call })).result.task
  t.equal(bytes(again), bytes(await client.getTask(booked.id)), 'the task holding the first reply, as stored')
  t.equal(again.artifacts.length, 1, 'one booking')

  const changed = await client.call('SendMessage', { message: { ...call, parts: [{ text: 'another booking' }] } })
  t.equal(textOf(changed.result.message), `Message ${call.messageId as string} was already received and answered; this copy has other content.`)
  t.strictSame(changed.result.message.referenceTaskIds, [booked.id], 'names the task holding the first reply')

  taskStore.forgotten.add(booked.id)
  const gone = await client.call('SendMessage', { message: call })
  t.equal(textOf(gone.result.message), `Message ${call.messageId as string} was already received and answered in task ${booked.id as string}, which is no longer kept.`)
  t.strictSame(gone.result.message.referenceTaskIds, [booked.id])
})

/** Answers `get` with the first state it found of each conversation: a kept state that falls behind (as a server's may). */
class BehindConversationStore extends MemoryConversationStore {
  readonly #first = new Map<string, ConversationState>()
  override async get (agentId: string, contextId: string): Promise<ConversationState | undefined> {
    const key = JSON.stringify([agentId, contextId])
    const found = this.#first.get(key) ?? await super.get(agentId, contextId)
    if (found !== undefined) this.#first.set(key, found)
    return found
  }
}

t.test('a retry check on a state that is behind is made again on the stored one: other content -32602, nothing stored; the same content its first reply', async (t) => {
  const client = new Client(t, await gateway(t, { conversations: new BehindConversationStore() }))
  const contextId = randomUUID()
  const ask = (messageId = randomUUID(), text = 'When are you open on Saturday?'): Json => ({ messageId, contextId, role: 'ROLE_USER', parts: [{ text }] })
  await client.call('SendMessage', { message: ask() })
  await client.call('SendMessage', { message: ask() })
  const message = ask()
  const first = await client.call('SendMessage', { message })
  const other = await client.call('SendMessage', { message: { ...message, parts: [{ text: 'Something else' }] } })
  t.equal(other.error?.code, -32602, 'the check before the turn missed it (its state is behind); the one under the lock did not')
  t.equal(other.error?.data?.[0]?.fieldViolations?.[0]?.field, 'message.messageId')
  t.equal((await client.call('ListTasks', { contextId })).result.totalSize, 0, 'no task stored for it')
  t.equal(bytes((await client.call('SendMessage', { message })).result), bytes(first.result), 'the same content: the first reply')

  const start = (await client.call('SendMessage', { message: ask(randomUUID(), 'I would like to book a table') })).result.task
  const step = (text: string): Json => ({ ...ask(randomUUID(), text), taskId: start.id })
  t.equal((await client.call('SendMessage', { message: step('date=2026-12-24') })).result.task.status.state, 'TASK_STATE_INPUT_REQUIRED')
  const done = await client.call('SendMessage', { message: step('partySize=4') })
  t.equal(done.result.task.status.state, 'TASK_STATE_COMPLETED', 'a step of a stored task planned on the stored state')
})

t.test('turns an earlier version stored (no digest, no kept reply) are recognised', async (t) => {
  const conversations = new MemoryConversationStore()
  const client = new Client(t, await gateway(t, { conversations }))
  const contextId = randomUUID()
  const question = { messageId: randomUUID(), contextId, role: 'ROLE_USER', parts: [{ text: 'When are you open on Saturday?' }] }
  await client.call('SendMessage', { message: question })
  const call = booking(contextId)
  const booked = (await client.call('SendMessage', { message: call })).result.task
  await conversations.update('demo', contextId, (state) => {
    const old = state as ConversationState
    for (const turn of old.turns) {
      delete turn.content
      delete turn.reply
    }
    return old
  })
  const answered = await client.call('SendMessage', { message: { ...question, parts: [{ text: 'any content' }] } })
  t.equal(textOf(answered.result.message), `Message ${question.messageId as string} was already received and answered.`, 'no kept reply: the earlier answer')
  const task = await client.call('SendMessage', { message: call })
  t.equal(task.result.task.id, booked.id, 'a task turn: the task as it stands')
})
