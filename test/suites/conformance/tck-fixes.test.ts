/**
 * Conformance, both doors, with and without a mount path: what the official A2A 1.0 kit (a2a-tck) found and
 * docs/conformance.md describes — the endpoint also at `<agent url>/` (a trailing slash), ProtoJSON proto names
 * (`message_id`, `task_id`, `history_length`, …) taken as their JSON names with one spelling per field, and the
 * agent card's cache validators (§8.6.1: Cache-Control max-age, ETag, 304 for If-None-Match).
 */
import t from 'tap'
import { taskExecutor, inputRequiredExecutor } from '../../fixtures/a2a-executors.js'
import { call, DOORS, get, post, serveDoor, userMessage, type DoorAgent } from '../../fixtures/doors.js'
import { contextIdOf } from '../../fixtures/context-ids.js'
import { CARD_MAX_AGE_SEC } from '../../../packages/a2a-converse/src/http/card-cache.js'

const card = { name: 'Demo', description: 'A test agent', capabilities: { streaming: true } }

for (const name of DOORS) {
  for (const mount of ['', '/v1']) {
    t.test(`${name}${mount}: POST <agent url>/ is the endpoint, known agents only`, async (t) => {
      const door = await serveDoor(t, name, { agents: [{ id: 'demo', card, executor: taskExecutor() }], mount })
      const sent = await call(door, 'SendMessage', { message: userMessage('q') }, { path: '/a2a/demo/' })
      t.equal(sent.status, 200)
      t.equal(sent.json.result.task.status.state, 'TASK_STATE_COMPLETED')
      const unknown = await post(door, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }), { path: '/a2a/nobody/' })
      t.equal(unknown.status, 404, 'an unknown agent, slash or not')
    })
  }

  t.test(`${name}: ProtoJSON proto names are accepted in every request message`, async (t) => {
    const agents: DoorAgent[] = [{ id: 'demo', card, executor: inputRequiredExecutor() }]
    const door = await serveDoor(t, name, { agents })
    const contextId = contextIdOf(`${name}-proto-names`)
    const first = await call(door, 'SendMessage', {
      message: { message_id: 'm-proto-1', role: 'ROLE_USER', parts: [{ text: 'which?', media_type: 'text/plain' }], context_id: contextId },
      configuration: { history_length: 0, return_immediately: false, accepted_output_modes: ['text/plain'] }
    })
    const task = first.json.result.task
    t.equal(task.contextId, contextId, 'context_id taken as the contextId')
    t.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED')
    t.equal(task.history, undefined, 'history_length 0: no history')
    const got = await call(door, 'GetTask', { id: task.id, history_length: 1 })
    t.equal(got.json.result.history.length, 1, 'history_length read')
    const listed = await call(door, 'ListTasks', { context_id: contextId, page_size: 10, include_artifacts: false })
    t.strictSame(listed.json.result.tasks.map((listedTask: { id: string }) => listedTask.id), [task.id], 'ListTasks by context_id')
    const followUp = await call(door, 'SendMessage', {
      message: { message_id: 'm-proto-2', task_id: task.id, context_id: contextId, role: 'ROLE_USER', parts: [{ text: '42' }], reference_task_ids: [] }
    })
    t.equal(followUp.json.result.task.id, task.id, 'task_id continues the task')
    t.equal(followUp.json.result.task.status.state, 'TASK_STATE_COMPLETED')
    const push = await call(door, 'GetTaskPushNotificationConfig', { task_id: task.id, id: 'c1' })
    t.equal(push.json.error.code, -32003, 'task_id names the push config\'s task: the capability gate answers, not -32602')
  })

  t.test(`${name}: a field under both names is -32602 naming both, Struct keys are the client's own`, async (t) => {
    const door = await serveDoor(t, name, { agents: [{ id: 'demo', card, executor: taskExecutor() }] })
    const both = await call(door, 'SendMessage', { message: { ...userMessage('q'), message_id: 'other' } })
    t.equal(both.json.error.code, -32602)
    t.match(both.json.error.data, [{ fieldViolations: [{ field: 'message.messageId', description: 'is also sent as message_id: send one of the two names' }] }])
    const metadata = { task_id: 'mine', nested: { context_id: 'kept' } }
    const sent = await call(door, 'SendMessage', { message: userMessage('q', { metadata }), metadata })
    const history = sent.json.result.task.history[0]
    t.strictSame(history.metadata, metadata, 'metadata keys are not field names')
  })

  t.test(`${name}: the agent card has Cache-Control max-age and an ETag, and If-None-Match gets 304`, async (t) => {
    const door = await serveDoor(t, name, { agents: [{ id: 'demo', card, executor: taskExecutor() }, { id: 'other', card: { ...card, name: 'Other' } }] })
    for (const path of ['/a2a/demo/.well-known/agent-card.json', '/.well-known/agent-card.json', '/a2a/other/.well-known/agent-card.json']) {
      const first = await get(door, path)
      t.equal(first.status, 200)
      t.match(first.headers.get('content-type'), /^application\/json/)
      // No publicUrl here: the card's URLs come from the request's Host, so no shared cache may keep it.
      t.equal(first.headers.get('cache-control'), `private, max-age=${CARD_MAX_AGE_SEC}`, path)
      const etag = first.headers.get('etag') as string
      t.match(etag, /^"[A-Za-z0-9_-]{27}"$/, `${path}: a strong ETag`)
      const again = await fetch(door.base + path, { headers: { 'if-none-match': etag } })
      t.equal(again.status, 304, `${path}: not modified`)
      t.equal(await again.text(), '')
      t.equal(again.headers.get('etag'), etag)
      t.equal(again.headers.get('cache-control'), `private, max-age=${CARD_MAX_AGE_SEC}`)
      for (const header of [`"nope", W/${etag}`, '*']) {
        t.equal((await fetch(door.base + path, { headers: { 'if-none-match': header } })).status, 304, `${path}: If-None-Match ${header}`)
      }
      const stale = await get(door, path, { 'if-none-match': '"stale"' })
      t.equal(stale.status, 200, 'another tag: the card')
      t.equal(stale.headers.get('etag'), etag, 'the same card, the same tag')
    }
    const demo = (await get(door, '/a2a/demo/.well-known/agent-card.json')).headers.get('etag')
    const other = (await get(door, '/a2a/other/.well-known/agent-card.json')).headers.get('etag')
    t.not(demo, other, 'another card, another tag')
  })
}
