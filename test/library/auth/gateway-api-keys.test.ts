/**
 * A gateway that requires API keys (A2A_API_KEYS), on a real port: the card says so and stays public, the official
 * SDK client with a key is served, every credential failure is the same 401 (WWW-Authenticate: Bearer, a JSON-RPC
 * -32000 body) and nothing of a credential reaches the log.
 */
import t from 'tap'
import { Message, SendMessageRequest } from '@a2a-js/sdk'
import { ALICE_KEY, API_KEYS, BOB_KEY, call, sdkClient } from '../../fixtures/auth.js'
import { logLines, rpc, startGateway, userMessage } from '../../fixtures/gateway-helpers.js'

const UNAUTHENTICATED = {
  code: -32000,
  message: 'Authentication required: send a valid credential as Authorization: Bearer <credential>',
  data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'UNAUTHENTICATED', domain: 'a2a-converse', metadata: {} }]
}

function textOf (message: Message | undefined): string {
  return (message?.parts ?? []).map((part) => part.content?.$case === 'text' ? part.content.value : '').join('')
}

t.test('the public card declares the bearer scheme and is readable without a credential', async (t) => {
  const { base } = await startGateway(t, { A2A_API_KEYS: API_KEYS })
  const response = await fetch(`${base}/.well-known/agent-card.json`)
  t.equal(response.status, 200)
  const card = await response.json() as Record<string, any>
  t.same(card.securitySchemes, {
    apiKey: { httpAuthSecurityScheme: { scheme: 'Bearer', description: 'An API key issued to the caller, as Authorization: Bearer <key>.' } }
  })
  t.same(card.securityRequirements, [{ schemes: { apiKey: { list: [] } } }])
  const perAgent = await (await fetch(`${base}/a2a/demo/.well-known/agent-card.json`)).json() as Record<string, any>
  t.same(perAgent.securityRequirements, card.securityRequirements, "the agent's own card path too")
})

t.test('the official SDK client with a key is served; without one it is refused', async (t) => {
  const { base } = await startGateway(t, { A2A_API_KEYS: API_KEYS })
  const client = await sdkClient(base, ALICE_KEY)
  const reply = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('How long do I have to return an order?') })) as Message
  t.match(textOf(reply), /30 days/)

  const anonymous = await sdkClient(base)
  await t.rejects(anonymous.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('hello') })), 'no credential: the client sees an error')
})

t.test('every credential failure is the same 401, and the Bearer word is case-insensitive', async (t) => {
  const log = logLines()
  const { base } = await startGateway(t, { A2A_API_KEYS: API_KEYS, LOG_LEVEL: 'trace' }, { loggerStream: log.stream })
  const unknownKey = 'carol-key-0123456789abcdef'
  const cases: Array<[string, string | undefined]> = [
    ['no Authorization header', undefined],
    ['an unknown key', `Bearer ${unknownKey}`],
    ['a known key under another scheme', `Basic ${ALICE_KEY}`],
    ['the scheme word alone', 'Bearer'],
    ['an empty header', ''],
    ['a key with a character more', `Bearer ${ALICE_KEY}x`],
    ['two credentials', `Bearer ${ALICE_KEY} ${BOB_KEY}`]
  ]
  for (const [name, authorization] of cases) {
    const response = await fetch(`${base}/a2a/demo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...(authorization === undefined ? {} : { authorization }) },
      body: rpc('ListTasks', {}, 'req-7')
    })
    t.equal(response.status, 401, `${name}: 401`)
    t.equal(response.headers.get('www-authenticate'), 'Bearer realm="a2a"', `${name}: the challenge`)
    t.same(await response.json(), { jsonrpc: '2.0', id: 'req-7', error: UNAUTHENTICATED }, `${name}: the same JSON-RPC body`)
  }
  const streaming = await fetch(`${base}/a2a/demo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: rpc('SendStreamingMessage', { message: userMessage('hi') }, 8)
  })
  t.equal(streaming.status, 401, 'a streaming method is refused before any stream opens')
  t.equal(streaming.headers.get('content-type'), 'application/json; charset=utf-8')
  t.same(await streaming.json(), { jsonrpc: '2.0', id: 8, error: UNAUTHENTICATED })
  const unparsable = await fetch(`${base}/a2a/demo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' })
  t.equal(unparsable.status, 401, 'an unauthenticated body is not looked at')
  t.same((await unparsable.json() as Record<string, unknown>).id, null)
  const notRpc = await fetch(`${base}/a2a/demo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[1, 2]' })
  t.equal(notRpc.status, 401)
  t.same((await notRpc.json() as Record<string, unknown>).id, null, 'a body without a readable id: id null')

  for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
    const { status, body } = await call(base, 'ListTasks', {}, undefined)
    t.equal(status, 401)
    t.ok(body.error)
    const response = await fetch(`${base}/a2a/demo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `${scheme} ${BOB_KEY}` },
      body: rpc('ListTasks', {})
    })
    t.equal(response.status, 200, `"${scheme}" is Bearer`)
    t.same((await response.json() as Record<string, any>).result.tasks, [])
  }

  const raw = log.raw.join('')
  for (const secret of [ALICE_KEY, BOB_KEY, unknownKey]) t.notOk(raw.includes(secret), 'no credential in the log')
  t.notOk(/authorization/i.test(raw), 'no Authorization header in the log')
  const refusals = log.lines.filter((line) => line.msg === 'A2A error reply' && line.code === -32000)
  t.ok(refusals.length >= cases.length, 'each refusal is logged with its code only')
  t.ok(refusals.every((line) => Object.keys(line).every((key) => ['level', 'time', 'pid', 'hostname', 'reqId', 'msg', 'code', 'method'].includes(key))),
    'and nothing else about it')
})

t.test('an agent may stay walk-in (auth: walk-in in the agents file) next to one that requires keys', async (t) => {
  const { readFile } = await import('node:fs/promises')
  const { join } = await import('node:path')
  const root = join(import.meta.dirname, '../../..')
  const demo = JSON.parse(await readFile(join(root, 'examples/demo/agent.json'), 'utf8')) as Record<string, unknown>
  demo.documents = join(root, 'examples/demo/documents')
  const dir = t.testdir({ 'agents.json': JSON.stringify([demo, { ...demo, id: 'open', name: 'Open shop', auth: 'walk-in' }]) })
  const { base } = await startGateway(t, { A2A_API_KEYS: API_KEYS, AGENTS_FILE: join(dir, 'agents.json') })
  t.equal((await call(base, 'ListTasks', {})).status, 401, 'demo requires a key')
  const open = await call(base, 'ListTasks', {}, undefined, 'open')
  t.equal(open.status, 200, 'open takes walk-ins')
  const openCard = await (await fetch(`${base}/a2a/open/.well-known/agent-card.json`)).json() as Record<string, unknown>
  t.equal(openCard.securitySchemes, undefined, "the walk-in agent's card declares no scheme")
  t.equal(openCard.securityRequirements, undefined)
  const keyed = await call(base, 'ListTasks', {}, 'not-a-key-at-all-but-long', 'open')
  t.equal(keyed.status, 200, 'a walk-in agent does not look at credentials')
})

t.test('A2A_AUTH=walk-in with keys configured: every agent takes walk-ins unless its definition says otherwise', async (t) => {
  const { base } = await startGateway(t, { A2A_API_KEYS: API_KEYS, A2A_AUTH: 'walk-in' })
  t.equal((await call(base, 'ListTasks', {})).status, 200)
  const card = await (await fetch(`${base}/.well-known/agent-card.json`)).json() as Record<string, unknown>
  t.equal(card.securitySchemes, undefined)
})
