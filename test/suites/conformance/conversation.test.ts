/**
 * Conformance, both doors: the gateway's conversation runtime (the demo agent, its routines, its human inbox)
 * behind each door, driven over HTTP: a routine with slots to completion, a typed routine call, and a human
 * takeover whose person's reply reaches an open SubscribeToTask stream; a retry answered with the first reply (a
 * streamed retry of a held turn follows its task).
 */
import t from 'tap'
import { defaultAgentsFile, loadAgentDefinitions } from '../../../src/gateway/agent-definitions.js'
import { buildAgentRuntime } from '../../../src/gateway/runtime.js'
import { memoryState } from '../../../src/gateway/state.js'
import { validateEnvelope } from 'a2a-converse'
import { call, DOORS, open, serveDoor, URI, type DoorName } from '../../fixtures/doors.js'
import { message, textOf } from '../../fixtures/conversation-gateway.js'
import { contextIdOf } from '../../fixtures/context-ids.js'
import type { Test } from 'tap'

async function serveDemo (t: Test, name: DoorName) {
  const state = memoryState()
  t.teardown(() => state.close())
  const runtime = await buildAgentRuntime({
    definitions: await loadAgentDefinitions(defaultAgentsFile()),
    conversations: state.conversations,
    events: state.events,
    taskStoreFor: state.taskStoreFor
  })
  const door = await serveDoor(t, name, { agents: runtime.agents, events: state.events })
  return { door, inbox: runtime.inbox }
}

function envelope (t: Test, object: any) {
  const found = object?.metadata?.[URI]
  t.ok(validateEnvelope(found), 'the envelope passes the schema')
  return found
}

for (const name of DOORS) {
  t.test(`${name}: a routine with slots, then a typed call`, async (t) => {
    const { door } = await serveDemo(t, name)
    const send = async (text: string, options = {}) =>
      (await call(door, 'SendMessage', { message: message(text, options) }, { active: true })).json.result
    const started = (await send('I would like to book a table', { contextId: contextIdOf(`walk-${name}`) })).task
    t.equal(started.status.state, 'TASK_STATE_INPUT_REQUIRED')
    t.match(envelope(t, started.status.message).routine, { toolName: 'book_table', status: 'waiting_for_input' })
    const half = (await send('date=2026-12-24, partySize=four', { contextId: contextIdOf(`walk-${name}`) })).task
    t.match(textOf(half.status.message), /partySize must be an integer/)
    const done = (await send('4', { contextId: contextIdOf(`walk-${name}`) })).task
    t.equal(done.status.state, 'TASK_STATE_COMPLETED')
    t.match(envelope(t, done.artifacts[0]).routine, { toolName: 'book_table', status: 'completed' })

    const typed = await send('', { parts: [{ data: { toolName: 'book_table' } }], call: { toolName: 'book_table', arguments: { date: '2026-12-31', partySize: 2 } } })
    const object = typed.task ?? typed.message
    const outcome = envelope(t, object.status?.message ?? object)
    t.match(outcome.invocation, { toolName: 'book_table', outcome: 'started' })

    const plain = await call(door, 'SendMessage', { message: message('I would like to book a table') })
    t.notMatch(plain.text, URI, 'the same runtime without activation: no trace')
  })

  t.test(`${name}: a retry gets the first reply byte for byte; a streamed retry of a held turn follows its task`, async (t) => {
    const { door, inbox } = await serveDemo(t, name)
    const contextId = contextIdOf(`retry-${name}`)
    const question = message('When are you open on Saturday?', { contextId })
    const first = await call(door, 'SendMessage', { message: question }, { active: true })
    t.ok(first.json.result.message)
    const again = await call(door, 'SendMessage', { message: question }, { active: true })
    t.equal(JSON.stringify(again.json.result), JSON.stringify(first.json.result), 'the same Message, byte for byte')
    const other = await call(door, 'SendMessage', { message: { ...question, parts: [{ text: 'other' }] } }, { active: true })
    t.equal(other.json.error?.code, -32602, 'other content under the same messageId')

    await inbox.takeover('demo', contextId)
    const ask = message('Can a person help me?', { contextId })
    const held = (await call(door, 'SendMessage', { message: ask }, { active: true })).json.result.task
    t.equal(held.status.state, 'TASK_STATE_WORKING')
    const retry = await open(door, 'SendStreamingMessage', { message: ask }, { active: true })
    const snapshot = await retry.sse.waitFor((frame) => frame.result?.task !== undefined)
    const stored = (await call(door, 'GetTask', { id: held.id }, { active: true })).json.result
    t.equal(JSON.stringify(snapshot.result.task), JSON.stringify(stored), 'the task as it stands, as GetTask shows it')
    await inbox.reply('demo', contextId, 'Hi, Sam here.')
    const pushed = await retry.sse.waitFor((frame) => textOf(frame.result?.statusUpdate?.status?.message) === 'Hi, Sam here.')
    t.equal(pushed.result.statusUpdate.taskId, held.id, 'the retry\'s stream follows the running task')
    retry.abort()
  })

  t.test(`${name}: human takeover: a suppressed turn, the person's reply on an open stream`, async (t) => {
    const { door, inbox } = await serveDemo(t, name)
    const contextId = contextIdOf(`takeover-${name}`)
    const first = (await call(door, 'SendMessage', { message: message('Where is my parcel?', { contextId }) }, { active: true })).json.result
    t.ok(first.message ?? first.task)
    t.equal((await inbox.takeover('demo', contextId))?.ownership, 'human_owned')
    const held = (await call(door, 'SendMessage', { message: message('Can a person help me?', { contextId }) }, { active: true })).json.result.task
    t.equal(held.status.state, 'TASK_STATE_WORKING')
    t.strictSame(envelope(t, held.status.message).ownership, { state: 'human_owned', suppressed: true })

    const subscriber = await open(door, 'SubscribeToTask', { id: held.id }, { active: true })
    t.equal(subscriber.response.headers.get('a2a-extensions'), URI)
    await subscriber.sse.waitFor((frame) => frame.result?.task !== undefined)
    const replied = await inbox.reply('demo', contextId, 'Hi, Sam here.')
    t.match(replied, { taskId: held.id, delivered: true })
    const pushed = await subscriber.sse.waitFor((frame) => textOf(frame.result?.statusUpdate?.status?.message) === 'Hi, Sam here.')
    t.equal(envelope(t, pushed.result.statusUpdate.status.message).author, 'human')
    t.equal(pushed.id, 1)
    subscriber.abort()
    const stored = (await call(door, 'GetTask', { id: held.id }, { active: true })).json.result
    t.equal(envelope(t, stored.status.message).author, 'human')
    t.equal((await inbox.release('demo', contextId))?.ownership, 'ai_owned')
  })
}
