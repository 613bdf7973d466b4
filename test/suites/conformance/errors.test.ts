/**
 * Conformance, both doors: every JSON-RPC error the endpoint answers, with the same HTTP status and the same
 * body on each door (-32700 -32600 -32601 -32602 -32001 -32004 -32007 -32008 -32009 -32603, 413, 415, 404),
 * and the echo header on error replies of a known agent.
 */
import t, { type Test } from 'tap'
import { staticEnvelopeProvider } from 'a2a-converse'
import { ENVELOPE } from '../../fixtures/a2a-app.js'
import { InMemoryTaskStore, type TaskStore } from '@a2a-js/sdk/server'
import { messageExecutor, taskExecutor } from '../../fixtures/a2a-executors.js'
import { call, DOORS, post, serveDoor, URI, userMessage, type DoorName, type DoorOptions } from '../../fixtures/doors.js'

const REQUIRED = 'https://example.com/ext/required/v1'
const info = (reason: string, metadata: Record<string, string> = {}) =>
  [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'a2a-protocol.org', metadata }]
const violation = (field: string, description: string) =>
  [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field, description }] }]
const VALID = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: userMessage('hi') } })

function serve (t: Test, name: DoorName, options: Partial<DoorOptions> & { card?: Record<string, unknown> } = {}) {
  const { card, ...rest } = options
  return serveDoor(t, name, {
    agents: [{ id: 'demo', card: { name: 'Demo', description: 'A test agent', ...card }, executor: messageExecutor() }],
    provider: staticEnvelopeProvider(ENVELOPE as never),
    ...rest
  })
}

/** Each error reply body, exactly, per door: the same list on both. */
async function transcript (t: Test, name: DoorName) {
  const door = await serve(t, name, { bodyLimit: 300 })
  const seen: Array<[string, number, unknown, string | null]> = []
  const record = async (what: string, reply: Promise<Awaited<ReturnType<typeof post>>>) => {
    const { status, json, headers } = await reply
    seen.push([what, status, json, headers.get('a2a-extensions')])
  }
  await record('invalid JSON', post(door, '{bad', { active: true }))
  for (const payload of ['{"jsonrpc":"2.0",', 'nul', '\u0000']) await record(`invalid JSON ${JSON.stringify(payload)}`, post(door, payload))
  await record('empty body', post(door, '', { active: true }))
  await record('no body, no content type', post(door, undefined, { headers: { 'content-type': [] } }))
  await record('a body without content type', post(door, Buffer.from(VALID), { headers: { 'content-type': [] } }))
  await record('text/plain', post(door, VALID, { headers: { 'content-type': 'text/plain' } }))
  for (const type of ['application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'application/']) {
    await record(type, post(door, VALID, { headers: { 'content-type': type } }))
  }
  await record('too large', post(door, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: userMessage('x'.repeat(400)) } })))
  await record('batch', post(door, `[${VALID}]`))
  await record('empty batch', post(door, '[]'))
  for (const body of ['null', '42', '"SendMessage"', 'true']) await record(`not an object: ${body}`, post(door, body))
  const envelopes: unknown[] = [
    { jsonrpc: '1.0', id: 3, method: 'SendMessage' }, { id: 4, method: 'SendMessage' }, { jsonrpc: '2.0', id: 4 },
    { jsonrpc: '2.0', id: 4, method: 7 }, { jsonrpc: '2.0', id: { x: 1 }, method: 'SendMessage' }, { jsonrpc: '2.0', id: [4], method: 'SendMessage' },
    { jsonrpc: '2.0', id: false, method: 'SendMessage' }, { jsonrpc: '2.0', id: 4.2, method: 'SendMessage' }
  ]
  for (const body of envelopes) await record(`bad envelope ${JSON.stringify(body)}`, post(door, JSON.stringify(body)))
  await record('unknown method', call(door, 'message/send', {}, { id: 'x' }))
  for (const method of ['tasks/get', 'sendMessage', 'constructor', '__proto__', 'toString']) {
    await record(`unknown method ${method}`, call(door, method, {}, { id: 'x' }))
  }
  await record('invalid params', call(door, 'SendMessage', { message: { ...userMessage('x'), parts: [] } }, { id: 2 }))
  await record('no params', call(door, 'GetTask', undefined, { id: 3 }))
  await record('unknown task', call(door, 'GetTask', { id: 'nope' }, { active: true }))
  await record('no version', call(door, 'SendMessage', { message: userMessage('x') }, { headers: { 'a2a-version': [] } }))
  await record('version 2.0', call(door, 'SendMessage', { message: userMessage('x') }, { headers: { 'a2a-version': '2.0' } }))
  await record('query version', call(door, 'GetTask', { id: 'nope' }, { headers: { 'a2a-version': [] }, path: '/a2a/demo?A2A-Version=1.0' }))
  await record('extended card not declared', call(door, 'GetExtendedAgentCard'))
  await record('push not declared', call(door, 'GetTaskPushNotificationConfig', { taskId: 't', id: 'c' }))
  await record('unknown agent', call(door, 'SendMessage', { message: userMessage('x') }, { agent: 'nobody', active: true }))
  return seen
}

t.test('both doors answer every error identically', async (t) => {
  const fastify = await transcript(t, 'fastify')
  const express = await transcript(t, 'express')
  t.strictSame(express, fastify)
  const byWhat = new Map(fastify.map(([what, ...rest]) => [what, rest]))
  t.strictSame(byWhat.get('invalid JSON'), [400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Invalid JSON payload' } }, URI],
    'the echo header on an error reply of a known agent')
  t.match(byWhat.get('empty body'), [400, { error: { code: -32700 } }])
  t.match(byWhat.get('no body, no content type'), [400, { error: { code: -32700 } }])
  t.match(byWhat.get('a body without content type'), [415, { error: { code: -32005, message: 'Content-Type is required; expected application/json' } }])
  t.match(byWhat.get('text/plain'), [415, { error: { code: -32005, data: info('CONTENT_TYPE_NOT_SUPPORTED', { supportedContentTypes: 'application/json', contentType: 'text/plain' }) } }])
  t.strictSame(byWhat.get('too large'), [413, {
    jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Request payload too large', data: violation('request', 'must not exceed 300 bytes') }
  }, null])
  t.match(byWhat.get('batch'), [200, { id: null, error: { code: -32600, message: 'Batch requests are not supported' } }])
  t.match(byWhat.get('empty batch'), [200, { id: null, error: { code: -32600, data: [{ fieldViolations: [{ description: 'an empty batch is not a request' }] }] } }])
  for (const body of ['null', '42', '"SendMessage"', 'true']) t.match(byWhat.get(`not an object: ${body}`), [200, { id: null, error: { code: -32600 } }], body)
  t.match(byWhat.get('bad envelope {"jsonrpc":"1.0","id":3,"method":"SendMessage"}'), [200, { id: 3, error: { code: -32600 } }], 'the id is kept when it is one')
  t.match(byWhat.get('bad envelope {"jsonrpc":"2.0","id":{"x":1},"method":"SendMessage"}'), [200, { id: null, error: { code: -32600 } }], 'an id that is none: null')
  for (const [what, reply] of byWhat) {
    if (what.startsWith('invalid JSON')) t.match(reply, [400, { id: null, error: { code: -32700, message: 'Invalid JSON payload' } }], what)
    if (what.startsWith('bad envelope')) t.match(reply, [200, { error: { code: -32600 } }], what)
    if (what.startsWith('unknown method')) t.match(reply, [200, { id: 'x', error: { code: -32601 } }], what)
    if (what.startsWith('application/') || what.startsWith('multipart')) t.match(reply, [415, { error: { code: -32005 } }], what)
  }
  t.strictSame(byWhat.get('unknown method'), [200, { jsonrpc: '2.0', id: 'x', error: { code: -32601, message: 'Method not found: "message/send"' } }, null])
  t.strictSame(byWhat.get('invalid params'), [200, {
    jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'Invalid parameters', data: violation('message.parts', 'must have at least one item') }
  }, null])
  t.match(byWhat.get('no params'), [200, { id: 3, error: { code: -32602 } }])
  t.match(byWhat.get('unknown task'), [200, { error: { code: -32001, data: info('TASK_NOT_FOUND', { taskId: 'nope' }) } }, URI])
  t.match(byWhat.get('no version'), [200, { error: { code: -32601, message: /^Method not found: "SendMessage" in A2A 0\.3/ } }], 'no version is A2A 0.3, which has no SendMessage')
  t.match(byWhat.get('version 2.0'), [200, { error: { code: -32009 } }])
  t.match(byWhat.get('query version'), [200, { error: { code: -32001 } }], 'A2A-Version as a query parameter')
  t.match(byWhat.get('extended card not declared'), [200, { error: { code: -32004 } }])
  t.match(byWhat.get('push not declared'), [200, { error: { code: -32003 } }])
  t.strictSame(byWhat.get('unknown agent'), [404, { statusCode: 404, error: 'Not Found', message: 'unknown agent "nobody"' }, null])
})

for (const name of DOORS) {
  t.test(`${name}: -32008 unless the required extension is activated; -32004 streaming when not declared`, async (t) => {
    const door = await serve(t, name, { card: { capabilities: { streaming: false, extensions: [{ uri: REQUIRED, required: true }] } } })
    const missing = await call(door, 'SendMessage', { message: userMessage('x') })
    t.strictSame(missing.json.error.data, info('EXTENSION_SUPPORT_REQUIRED', { missingExtensions: REQUIRED }))
    t.equal(missing.json.error.code, -32008)
    const ok = await call(door, 'SendMessage', { message: userMessage('x') }, { headers: { 'a2a-extensions': `${REQUIRED}, ${URI}` } })
    t.equal(ok.json.result.message.parts[0].text, 'echo: x')
    t.equal(ok.headers.get('a2a-extensions'), `${REQUIRED}, ${URI}`)
    const stream = await call(door, 'SendStreamingMessage', { message: userMessage('x') }, { headers: { 'a2a-extensions': REQUIRED } })
    t.equal(stream.json.error.code, -32004, 'a request-level error of a streaming method stays a JSON reply')
    t.match(stream.headers.get('content-type'), /^application\/json/)
  })

  t.test(`${name}: -32004 for SubscribeToTask on a finished task, -32001 for an unknown one (plain JSON-RPC errors, no stream)`, async (t) => {
    const door = await serveDoor(t, name, { agents: [{ id: 'demo', card: { name: 'D', description: 'd' }, executor: taskExecutor() }] })
    const done = (await call(door, 'SendMessage', { message: userMessage('q') })).json.result.task
    const reply = await call(door, 'SubscribeToTask', { id: done.id }, { id: 7 })
    t.equal(reply.status, 200)
    t.match(reply.headers.get('content-type'), /^application\/json/)
    t.match(reply.json, { jsonrpc: '2.0', id: 7, error: { code: -32004, data: [{ reason: 'UNSUPPORTED_OPERATION' }] } })
    const unknown = await call(door, 'SubscribeToTask', { id: 'nope' }, { id: 8 })
    t.match([unknown.status, unknown.json], [200, { jsonrpc: '2.0', id: 8, error: { code: -32001 } }])
  })

  t.test(`${name}: application/a2a+json and parameters are accepted`, async (t) => {
    const door = await serve(t, name)
    for (const type of ['application/a2a+json', 'Application/JSON; charset=utf-8']) {
      const reply = await post(door, VALID, { headers: { 'content-type': type } })
      t.equal(reply.json.result.message.parts[0].text, 'echo: hi', type)
    }
  })

  t.test(`${name}: a failing task store: -32603 without details (JSON and SSE), logged`, async (t) => {
    const store: TaskStore = Object.assign(new InMemoryTaskStore(), {
      async load (): Promise<undefined> { throw new Error('database is down at 10.0.0.7') },
      async save (): Promise<void> { throw new Error('disk full at /var/lib/tasks') }
    })
    const door = await serveDoor(t, name, { agents: [{ id: 'demo', card: { name: 'D', description: 'd' }, executor: taskExecutor(), taskStore: store }] })
    const reply = await call(door, 'GetTask', { id: 't' }, { id: 3 })
    t.strictSame(reply.json, { jsonrpc: '2.0', id: 3, error: { code: -32603, message: 'Internal error while handling GetTask' } })
    // Before the first event: a plain reply, like any other method's.
    const stream = await call(door, 'SendStreamingMessage', { message: userMessage('x') }, { id: 4 })
    t.strictSame(stream.json, { jsonrpc: '2.0', id: 4, error: { code: -32603, message: 'Internal error while handling SendStreamingMessage' } })
    t.notMatch(reply.text + stream.text, /10\.0\.0\.7|disk full| at /)
    t.strictSame(door.logs.map((line) => [line.level, line.msg, line.method, line.err.message]), [
      [50, 'A2A request handler failed', 'GetTask', 'database is down at 10.0.0.7'],
      [50, 'A2A request handler failed', 'SendStreamingMessage', 'database is down at 10.0.0.7']
    ])
  })
}
