/** End to end: the real gateway (demo agent, no options) on a port, driven by the official @a2a-js/sdk client. */
import t from 'tap'
import { Message, SendMessageRequest, TaskState } from '@a2a-js/sdk'
import {
  ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, ServiceParameters, withA2AExtensions
} from '@a2a-js/sdk/client'
import { SEED_BODY, SEED_HEADERS, startGateway, URI, userMessage } from '../fixtures/gateway-helpers.js'

/** fetch that remembers every exchange, so the test sees the response headers the SDK client does not expose. */
function recordingFetch () {
  const exchanges: Array<{ url: string, method: string, requestHeaders: Headers, response: Response }> = []
  const fetchImpl: typeof fetch = async (input, init) => {
    const response = await fetch(input, init)
    exchanges.push({
      url: String(input instanceof Request ? input.url : input),
      method: init?.method ?? 'GET',
      requestHeaders: new Headers(init?.headers),
      response
    })
    return response
  }
  return { exchanges, fetchImpl }
}

const withConverse = { serviceParameters: ServiceParameters.create(withA2AExtensions(URI)) }

function textOf (message: Message | undefined): string {
  return (message?.parts ?? []).map((part) => part.content?.$case === 'text' ? part.content.value : '').join('')
}

t.test('card resolution, SendMessage and SendStreamingMessage with the extension, on the demo agent', async (t) => {
  const { base } = await startGateway(t)
  const { exchanges, fetchImpl } = recordingFetch()
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl })
  }))
  const client = await factory.createFromUrl(base)

  t.equal(exchanges[0].url, `${base}/.well-known/agent-card.json`, 'the card comes from the well-known path')
  t.equal(client.protocolVersion, '1.0')
  const card = await client.getAgentCard()
  t.equal(card.name, 'Demo shop assistant')
  t.equal(card.supportedInterfaces[0].url, `${base}/a2a/demo`)
  t.equal(card.supportedInterfaces[0].protocolBinding, 'JSONRPC')
  t.equal(card.capabilities?.streaming, true)
  t.ok(card.capabilities?.extensions.some((entry) => entry.uri === URI), 'the card declares the converse extension')

  // SendMessage with the extension header: the 30-day answer citing "Returns policy", and the echo header.
  const request = SendMessageRequest.fromJSON({ message: userMessage('How long do I have to return an order?') })
  const reply = await client.sendMessage(request, withConverse) as Message
  const sent = exchanges.at(-1)!
  t.equal(sent.url, `${base}/a2a/demo`)
  t.equal(sent.requestHeaders.get('a2a-extensions'), URI, 'the SDK client sent the extension header')
  t.equal(sent.response.headers.get('a2a-extensions'), URI, 'the gateway echoes the activated extension')
  t.ok(sent.response.headers.get('x-request-id'), 'every response carries a request id')
  t.match(textOf(reply), /30 days of delivery/)
  t.strictSame(reply.extensions, [URI])
  const envelope = reply.metadata?.[URI] as Record<string, any>
  t.match(envelope, {
    author: 'agent',
    answerCoverage: { availability: 'assessed', coverage: 'answered', reason: 'sufficient_evidence' },
    ownership: { state: 'ai_owned', suppressed: false }
  })
  t.equal(envelope.answerCoverage.originatingRequestId, request.message!.messageId)
  t.type(envelope.answerCoverage.originatingTurnId, 'string')
  t.ok(envelope.citations.some((citation: any) => citation.title === 'Returns policy' && citation.documentId && citation.chunkId),
    'cites the returns policy')

  // Without the header: same answer, no envelope, no echo.
  const plain = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('How long do I have to return an order?') })) as Message
  t.match(textOf(plain), /30 days/)
  t.equal(plain.metadata?.[URI], undefined, 'no envelope without the header')
  t.equal(exchanges.at(-1)!.response.headers.get('a2a-extensions'), null, 'no echo without the header')

  // SendStreamingMessage with the header: the envelope on the frames and the echo on the SSE response.
  const frames: Array<{ $case: string, value: any }> = []
  for await (const event of client.sendMessageStream(SendMessageRequest.fromJSON({ message: userMessage('What is the warranty on a laptop?') }), withConverse)) {
    if (event.payload !== undefined) frames.push(event.payload)
  }
  const streamed = exchanges.at(-1)!
  t.match(streamed.response.headers.get('content-type'), /^text\/event-stream/)
  t.equal(streamed.response.headers.get('a2a-extensions'), URI, 'the echo header is on the SSE response')
  t.ok(frames.length >= 1)
  for (const frame of frames) {
    const message = frame.$case === 'message' ? frame.value : frame.value?.status?.message
    if (message === undefined) continue
    t.match(message.metadata?.[URI], { author: 'agent', answerCoverage: { availability: 'assessed' } }, `${frame.$case} frame carries the envelope`)
  }
  const answer = frames.find((frame) => frame.$case === 'message')?.value as Message
  t.match(textOf(answer), /warranty/i)
  t.ok((answer.metadata?.[URI] as any).citations.some((citation: any) => citation.title === 'Warranty'), 'the stream cites the warranty')

  // A routine turn streams a task: its status frames carry the routine in the envelope.
  const kinds: string[] = []
  let last: any
  for await (const event of client.sendMessageStream(SendMessageRequest.fromJSON({ message: userMessage('I would like to book a table') }), withConverse)) {
    if (event.payload === undefined) continue
    kinds.push(event.payload.$case)
    if (event.payload.$case === 'statusUpdate') last = event.payload.value
  }
  t.equal(exchanges.at(-1)!.response.headers.get('a2a-extensions'), URI)
  t.same(kinds, ['task', 'statusUpdate'])
  t.equal(last.status.state, TaskState.TASK_STATE_INPUT_REQUIRED)
  t.match(last.status.message.metadata[URI], {
    author: 'agent',
    routine: { toolName: 'book_table', status: 'waiting_for_input', pendingInput: [{ key: 'date' }, { key: 'partySize' }] }
  })
})

t.test("the seed's curl, verbatim, against the listening gateway", async (t) => {
  const { base } = await startGateway(t)
  const response = await fetch(`${base}/a2a/demo`, { method: 'POST', headers: SEED_HEADERS, body: SEED_BODY })
  t.equal(response.status, 200)
  t.match(response.headers.get('content-type'), /^application\/json/)
  t.equal(response.headers.get('a2a-extensions'), URI)
  const body = await response.json() as Record<string, any>
  t.equal(body.jsonrpc, '2.0')
  t.equal(body.id, 1)
  const message = body.result.message
  t.equal(message.role, 'ROLE_AGENT')
  t.match(message.parts[0].text, /You can return an order within 30 days of delivery/)
  t.strictSame(message.extensions, [URI])
  const envelope = message.metadata[URI]
  t.match(envelope, {
    author: 'agent',
    answerCoverage: {
      availability: 'assessed',
      coverage: 'answered',
      reason: 'sufficient_evidence',
      originatingRequestId: '4f0c1a52-9e0b-4b8e-a7a5-0d6f0f6f2a10'
    },
    ownership: { state: 'ai_owned', suppressed: false }
  })
  t.type(envelope.answerCoverage.originatingTurnId, 'string')
  t.ok(envelope.citations.length >= 1)
  t.equal(envelope.citations[0].title, 'Returns policy')
  for (const citation of envelope.citations) {
    t.type(citation.documentId, 'string')
    t.type(citation.chunkId, 'string')
  }
})
