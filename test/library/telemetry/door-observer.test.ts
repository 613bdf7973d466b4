/**
 * The `observer` and MCP tool-call options of both doors (Fastify `a2aEndpoint` / `mcpEndpoint`, the Express
 * router): what an app of one's own counts its metrics from. The same conversation told to each door gives the
 * same records — a SendMessage with its answer, a stream opened and closed, an error's code, an MCP tools/call by
 * tool and as a `mcp` call — and an option of the wrong type is refused when the door is built.
 */
import t, { type Test } from 'tap'
import express from 'express'
import Fastify from 'fastify'
import { CLIENT_LINES, connectMcp } from '../../fixtures/mcp-clients.js'
import { call, DOORS, open, serveDoor, userMessage, type DoorName } from '../../fixtures/doors.js'
import { messageExecutor } from '../../fixtures/a2a-executors.js'
import { staticEnvelopeProvider } from 'a2a-converse'
import { a2aEndpoint, converse } from 'a2a-converse/fastify'
import type { CallObserver, CallRecord } from 'a2a-converse/service'
import { mcpEndpoint } from 'a2a-converse/mcp'
import { converseRouter } from 'a2a-converse/express'
import { InvalidOptionError } from '../../../packages/a2a-converse/src/core/errors.js'

const agents = [{ id: 'demo', card: { name: 'Demo', description: 'Echoes what it is told.' }, executor: messageExecutor() }]
const provider = staticEnvelopeProvider({
  answerCoverage: { availability: 'assessed', coverage: 'answered', reason: 'sufficient_evidence' },
  citations: [{ documentId: 'returns', chunkId: 'returns#1', title: 'Returns' }]
} as never)

/** What the observer and the tool-call callback were told, in order; records without their durations. */
function recorder () {
  const events: string[] = []
  const records: Array<Omit<CallRecord, 'durationMs'>> = []
  const observer: CallObserver = {
    callEnded: ({ durationMs, ...record }) => {
      records.push(record)
      events.push(`ended ${record.binding} ${record.method}`)
    },
    streamOpened: (agentId, binding) => { events.push(`opened ${agentId} ${binding}`) },
    streamClosed: (agentId, binding) => { events.push(`closed ${agentId} ${binding}`) }
  }
  const onToolCall = (agentId: string, tool: string): void => { events.push(`tool ${agentId} ${tool}`) }
  return { events, records, observer, onToolCall }
}

/** One scripted conversation on a door; what it was told. */
async function script (t: Test, name: DoorName) {
  const { events, records, observer, onToolCall } = recorder()
  const door = await serveDoor(t, name, { agents, provider, observer, onToolCall })
  const sent = await call(door, 'SendMessage', { message: userMessage('hi') }, { active: true })
  t.equal(sent.status, 200)
  const stream = await open(door, 'SendStreamingMessage', { message: userMessage('again') }, { active: true })
  await stream.sse.ended
  const missing = await call(door, 'GetTask', { id: 'no-such-task' })
  t.equal(missing.json.error.code, -32001)
  const client = await connectMcp(t, `${door.base}/mcp/a/demo`, CLIENT_LINES[0])
  await client.callTool({ name: 'ask_agent', arguments: { message: 'by mcp' } })
  await t.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), { code: -32602 }, 'an unknown tool: the protocol\'s error')
  return { events, records }
}

t.test('both doors tell the observer the same conversation', async (t) => {
  const told = []
  for (const name of DOORS) {
    const { events, records } = await script(t, name)
    t.strictSame(events, [
      'ended jsonrpc SendMessage',
      'opened demo jsonrpc', 'closed demo jsonrpc', 'ended jsonrpc SendStreamingMessage',
      'ended jsonrpc GetTask',
      'tool demo ask_agent', 'ended mcp SendMessage',
      'tool demo unknown'
    ], `${name}: calls, streams and tool calls in order`)
    const [sent, streamed, missing, viaMcp] = records
    const answer = { envelope: { answerCoverage: { coverage: 'answered', reason: 'sufficient_evidence' } } }
    t.match(sent, { agentId: 'demo', binding: 'jsonrpc', method: 'SendMessage', errorCode: undefined, storeUnavailable: false, answer },
      `${name}: a turn's answer with its envelope`)
    t.equal(sent.answer?.envelope?.citations?.length, 1)
    t.match(streamed, { method: 'SendStreamingMessage', answer: { envelope: { answerCoverage: { coverage: 'answered' } } } })
    t.match(missing, { method: 'GetTask', errorCode: -32001, answer: undefined })
    t.match(viaMcp, { binding: 'mcp', method: 'SendMessage', answer: { envelope: { answerCoverage: { coverage: 'answered' } } } },
      `${name}: the MCP door's call always activates the extension`)
    // Ids differ per run; everything else is the door's to keep equal.
    told.push(records.map(({ answer, ...rest }) => ({ ...rest, envelope: answer?.envelope })))
  }
  t.strictSame(told[0], told[1], 'Fastify and Express: the same records')
})

t.test('an observer or a tool-call callback of the wrong type is refused when the door is built', async (t) => {
  const declared = agents.map(({ id, card }) => ({ id, card }))
  for (const observer of [null, 'counts', { callEnded () {} }]) {
    t.throws(() => converseRouter({ agents, observer: observer as unknown as CallObserver }), InvalidOptionError, `Express: ${JSON.stringify(observer)}`)
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(converse, { agents: declared })
    app.register(a2aEndpoint, { agents: [{ id: 'demo', executor: messageExecutor() }], observer: observer as unknown as CallObserver })
    await t.rejects(async () => { await app.ready() }, InvalidOptionError, `Fastify: ${JSON.stringify(observer)}`)
  }
  t.throws(() => converseRouter({ agents, onMcpToolCall: 'count' as unknown as () => void }), { message: /onMcpToolCall/ })
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(converse, { agents: declared })
  await app.register(a2aEndpoint, { agents: [{ id: 'demo', executor: messageExecutor() }] })
  app.register(mcpEndpoint, { onToolCall: 'count' as unknown as () => void })
  await t.rejects(async () => { await app.ready() }, { message: /onToolCall/ })
  // A router without served agents takes the observer too (nothing to tell it).
  t.ok(express().use(converseRouter({ agents: declared, observer: recorder().observer })))
})

t.test('an observer or a tool-call callback that throws is logged; the call is answered as if it had not', async (t) => {
  const boom = (): never => { throw new Error('the metrics library failed') }
  for (const name of DOORS) {
    const door = await serveDoor(t, name, {
      agents, provider, observer: { callEnded: boom, streamOpened: boom, streamClosed: boom }, onToolCall: boom
    })
    const sent = await call(door, 'SendMessage', { message: userMessage('hi') }, { active: true })
    t.equal(sent.status, 200)
    t.equal(sent.json.result.message.parts[0].text, 'echo: hi')
    const stream = await open(door, 'SendStreamingMessage', { message: userMessage('again') }, { active: true })
    await stream.sse.ended
    t.equal(stream.sse.frames.at(-1)?.result.message.parts[0].text, 'echo: again')
    const client = await connectMcp(t, `${door.base}/mcp/a/demo`, CLIENT_LINES[0])
    const asked = await client.callTool({ name: 'ask_agent', arguments: { message: 'by mcp' } })
    t.notOk(asked.isError, `${name}: the MCP call answered`)
    const messages = door.logs.filter((line) => line.level === 50).map((line) => line.msg)
    t.strictSame(messages, [
      ...Array(4).fill('the A2A call observer threw; the call is answered as if it had not'),
      'the MCP onToolCall callback threw; the call is answered as if it had not',
      'the A2A call observer threw; the call is answered as if it had not'
    ], `${name}: each failure logged once, as an error`)
  }
})
