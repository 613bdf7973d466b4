/**
 * Text PostgreSQL refuses that JSON allows (issue 41, finding 10): a message whose text holds an unpaired UTF-16
 * surrogate (`"\ud800"`, valid JSON) used to be answered on the memory store and to end TASK_STATE_FAILED with the
 * database's own "invalid input syntax for type json" on the embedded and PostgreSQL stores. Now, on every store,
 * binding and door: in an identifier it is -32602 naming the field (as U+0000 is); anywhere else it becomes U+FFFD
 * before anything runs or is stored (packages/a2a-converse/src/protocol/well-formed.ts), so the turn is answered as on memory and the
 * conversation holds U+FFFD. Each client here is an official one, on the gateway's listening ports.
 */
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { Message, SendMessageRequest, Task } from '@a2a-js/sdk'
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory, type Client } from '@a2a-js/sdk/client'
import { ClientFactory as V03ClientFactory, ClientFactoryOptions as V03ClientFactoryOptions } from 'a2a-sdk-v03/client'
import type { Message as V03Message, Task as V03Task } from 'a2a-sdk-v03'
import { logLines, SEED_HEADERS } from '../fixtures/gateway-helpers.js'
import { sdkGrpcClient, startGrpcGateway } from '../fixtures/grpc.js'
import { connectMcp, CLIENT_LINES, lineName } from '../fixtures/mcp-clients.js'
import { AUTH, OPERATOR_KEY } from '../fixtures/conversation-gateway.js'
import { testSchema } from '../fixtures/test-schema.js'
import { MemoryConversationStore } from '../../packages/a2a-converse/src/stores/memory-conversation-store.js'
import type { ConversationState, ConversationUpdate, ConversationUpdateOptions } from '../../packages/a2a-converse/src/stores/conversation-store.js'
import { loadConfig } from '../../src/gateway/config.js'
import { buildGateway } from '../../src/gateway/app.js'
import type { AddressInfo } from 'node:net'

const url = process.env.TEST_DATABASE_URL
const LONE = ['\ud800', '\udfff', 'x\udc00\ud800y']
/** What the database stores said in the reply before the change. */
const DATABASE_WORDS = /invalid input syntax|unsupported Unicode|surrogate must|jsonb?\b/i

function textOf (parts: Array<Record<string, any>> | undefined): string {
  return (parts ?? []).map((part) => part.content?.$case === 'text' ? part.content.value : part.text ?? '').join('')
}

async function clientsOf (base: string): Promise<Record<string, Client>> {
  const over = async (factory: JsonRpcTransportFactory | RestTransportFactory): Promise<Client> =>
    await new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [factory] })).createFromUrl(base)
  return {
    'JSON-RPC': await over(new JsonRpcTransportFactory()),
    'HTTP+JSON': await over(new RestTransportFactory()),
    gRPC: await sdkGrpcClient(base)
  }
}

/** The conversation as the operator API shows it (walk-ins' conversations are keyed by their contextId). */
async function conversationText (base: string, contextId: string): Promise<string> {
  const response = await fetch(`${base}/api/v1/agents/demo/conversations/${encodeURIComponent(contextId)}`, { headers: AUTH })
  const view = await response.json() as { turns?: Array<{ text: string }> }
  return (view.turns ?? []).map((turn) => turn.text).join('\n')
}

async function onStore (t: Test, env: Record<string, string>): Promise<void> {
  const logs = logLines()
  const { base } = await startGrpcGateway(t, { ...env, LOG_LEVEL: 'info', OPERATOR_API_KEY: OPERATOR_KEY }, { loggerStream: logs.stream })
  const clients = await clientsOf(base)

  for (const [binding, client] of Object.entries(clients)) {
    t.test(`${binding}: a knowledge answer and a routine's task, the text holding unpaired surrogates`, async (t) => {
      for (const lone of LONE) {
        const contextId = randomUUID()
        const question = SendMessageRequest.fromJSON({ message: { messageId: randomUUID(), contextId, role: 'ROLE_USER', parts: [{ text: `When are you open on Saturday?${lone}` }] } })
        const answer = await client.sendMessage(question) as Message
        t.match(textOf(answer.parts), /Saturday from 10 am/, `${JSON.stringify(lone)}: answered as on memory`)
        const routineContext = randomUUID()
        const booking = SendMessageRequest.fromJSON({
          message: { messageId: randomUUID(), contextId: routineContext, role: 'ROLE_USER', parts: [{ text: `I would like to book a table ${lone}` }], metadata: { note: lone, [`key${lone}`]: 1 } }
        })
        const task = await client.sendMessage(booking) as Task
        t.equal(task.status?.state, 4 + 2 /* TASK_STATE_INPUT_REQUIRED */, `${JSON.stringify(lone)}: the routine's task waits for input (not FAILED)`)
        t.notMatch(textOf(task.status?.message?.parts as never), DATABASE_WORDS)
        const stored = await client.getTask({ id: task.id, historyLength: 10 } as never) as Task
        const user = stored.history.find((message) => message.role === 1)
        if (binding !== 'gRPC') {
          // gRPC's strings are UTF-8 on the wire: the client's encoder already sent U+FFFD.
          t.equal(textOf(user?.parts as never), `I would like to book a table ${lone.toWellFormed()}`, 'the task keeps U+FFFD in its place')
          t.same(user?.metadata, { note: lone.toWellFormed(), [`key${lone.toWellFormed()}`]: 1 }, 'metadata values and member names alike')
        }
        const conversation = await conversationText(base, contextId)
        t.ok(conversation.includes('\uFFFD') && conversation.isWellFormed(), 'the conversation holds U+FFFD')
      }
    })
  }

  t.test('A2A 0.3 (official 0.3.14 client, JSON-RPC and HTTP+JSON)', async (t) => {
    for (const transport of ['JSONRPC', 'HTTP+JSON'] as const) {
      const factory = new V03ClientFactory(V03ClientFactoryOptions.createFrom(V03ClientFactoryOptions.default, { preferredTransports: [transport] }))
      const client = await factory.createFromUrl(`${base}/a2a/demo/v0.3/`)
      const answer = await client.sendMessage({ message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'When are you open on Saturday?\ud800' }] } }) as V03Message
      t.match((answer.parts[0] as { text: string }).text, /Saturday from 10 am/, transport)
      const task = await client.sendMessage({ message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'I would like to book a table \udfff' }] } }) as V03Task
      t.equal(task.status.state, 'input-required', `${transport}: not failed`)
    }
  })

  for (const line of CLIENT_LINES) {
    t.test(`MCP, ${lineName(line)}: ask_agent with unpaired surrogates`, async (t) => {
      const client = await connectMcp(t, `${base}/mcp/a/demo`, line)
      const answer = await client.callTool({ name: 'ask_agent', arguments: { message: 'When are you open on Saturday?\ud800' } })
      t.notOk(answer.isError)
      t.match(JSON.stringify(answer.content), /Saturday from 10 am/)
      const routine = await client.callTool({ name: 'ask_agent', arguments: { message: 'I would like to book a table \udfff' } })
      t.notOk(routine.isError, 'the routine starts')
      t.notMatch(JSON.stringify(routine), DATABASE_WORDS)
    })
  }

  t.test('an identifier holding one is -32602 naming the field, on every store; nothing is written', async (t) => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['contextId', { contextId: `ctx-\ud800-${randomUUID()}` }, 'message.contextId'],
      ['messageId', { messageId: 'm\udfff' }, 'message.messageId'],
      ['a referenceTaskId', { referenceTaskIds: ['\ud800'] }, 'message.referenceTaskIds[0]']
    ]
    for (const [name, extra, field] of cases) {
      const response = await fetch(`${base}/a2a/demo`, {
        method: 'POST',
        headers: SEED_HEADERS,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'book a table' }], ...extra } } })
      })
      const reply = await response.json() as Record<string, any>
      t.equal(reply.error?.code, -32602, name)
      t.strictSame(reply.error?.data[0].fieldViolations, [{ field, description: 'must not contain an unpaired surrogate (U+D800 to U+DFFF)' }], name)
    }
  })

  t.test('an operator reply holding one is stored with U+FFFD', async (t) => {
    const contextId = randomUUID()
    await clients['JSON-RPC'].sendMessage(SendMessageRequest.fromJSON({ message: { messageId: randomUUID(), contextId, role: 'ROLE_USER', parts: [{ text: 'book a table' }] } }))
    const path = `${base}/api/v1/agents/demo/conversations/${contextId}`
    t.equal((await fetch(`${path}/takeover`, { method: 'POST', headers: AUTH })).status, 200)
    const replied = await fetch(`${path}/messages`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify({ text: 'Hello \ud800 from a person' }) })
    t.equal(replied.status, 201)
    t.ok((await conversationText(base, contextId)).includes('Hello \uFFFD from a person'))
  })

  t.test('nothing was logged at error', async (t) => {
    t.same(logs.lines.filter((line) => line.level >= 50).map((line) => line.msg), [])
  })
}

t.test('memory', async (t) => { await onStore(t, {}) })

t.test('embedded (the default store)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'surrogates-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  await onStore(t, { STATE: 'embedded', DATA_DIR: join(dir, 'data') })
})

if (url === undefined) {
  t.test('PostgreSQL', { skip: 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' }, async () => {})
} else {
  t.test('PostgreSQL', async (t) => { await onStore(t, { DATABASE_URL: url, DATABASE_SCHEMA: testSchema(t, url) }) })
}

/** A conversation store whose every update fails as a database would, with words of its own. */
class RefusingStore extends MemoryConversationStore {
  override async update<R extends ConversationState | undefined = ConversationState> (_agentId: string, _contextId: string, _fn: ConversationUpdate<R>, _options?: ConversationUpdateOptions): Promise<never> {
    throw new Error('relation "conversations_secret_schema" does not exist')
  }
}

t.test('a turn that fails for a reason of the store\'s is FAILED with a fixed text; the cause stays in the log', async (t) => {
  const logged: string[] = []
  const consoleError = console.error
  console.error = (...values: unknown[]) => { logged.push(values.map((value) => value instanceof Error ? `${value.stack} ${String((value.cause as Error)?.message)}` : String(value)).join(' ')) }
  t.teardown(() => { console.error = consoleError })
  const app = await buildGateway({ config: loadConfig({ STATE: 'memory', LOG_LEVEL: 'silent' }), conversations: new RefusingStore() })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  for (const text of ['book a table', 'When are you open on Saturday?']) {
    const response = await fetch(`${base}/a2a/demo`, {
      method: 'POST',
      headers: SEED_HEADERS,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: randomUUID(), contextId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] } } })
    })
    const body = await response.text()
    t.notMatch(body, /conversations_secret_schema|does not exist/, `${text}: the store's words are not sent`)
    const reply = JSON.parse(body)
    t.equal(reply.result?.task?.status.state, 'TASK_STATE_FAILED', text)
    t.equal(reply.result.task.status.message.parts[0].text, 'Agent execution error: the turn could not be completed', text)
  }
  // The SDK logs the rejection with console.error (the gateway's main routes the console to its log: console-to-log.ts).
  t.ok(logged.some((line) => line.includes('conversations_secret_schema')), 'the operator finds the cause in the log')
})
