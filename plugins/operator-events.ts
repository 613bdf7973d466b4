/**
 * The operator API's live stream (GET /api/v1/agents/:agentId/events) as Server-Sent Events on a hijacked reply:
 *
 * - `event: ready` once the subscription is in place (a client that loads the list after it misses nothing);
 * - `event: conversation` with an inbox entry (see runtime/conversation-feed.ts) whenever one of the agent's
 *   conversations changes, `event: removed` with `{ "contextId" }` when one is deleted;
 * - a `: keep-alive` comment every `keepAliveMs`, so proxies do not close an idle stream.
 *
 * Bounded: a client that reads slower than events come (more than `maxBufferedBytes` waiting) is cut off; it
 * reconnects and reloads the list. The stream ends when the client goes or the server closes.
 */
import type { ServerResponse } from 'node:http'
import type { FastifyInstance } from 'fastify'
import type { Inbox } from 'a2a-converse/runtime'
import { agentParams, notFound, type AgentParams } from './operator-scope.js'

export const DEFAULT_KEEP_ALIVE_MS = 25_000
export const DEFAULT_MAX_BUFFERED_BYTES = 1 << 20

export interface ConversationStream {
  close (): void
}

export type ConversationStreams = Set<ConversationStream>

export interface FollowOptions {
  raw: ServerResponse
  agentId: string
  inbox: Pick<Inbox, 'follow'>
  /** Where the open streams are kept (the plugin ends them on close); the stream removes itself when it ends. */
  streams: ConversationStreams
  /** Headers already set on the reply (request id): hijacked replies lose them. */
  headers: Record<string, number | string | readonly string[] | undefined>
  keepAliveMs: number
  maxBufferedBytes: number
}

export function followConversations (options: FollowOptions): void {
  const { raw, streams } = options
  for (const [name, value] of Object.entries(options.headers)) {
    if (value !== undefined) raw.setHeader(name, value as string | number | string[])
  }
  raw.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no'
  })

  let ended = false
  const stream: ConversationStream = { close: () => { end() } }
  const unsubscribe = options.inbox.follow(options.agentId, (event) => {
    const name = 'removed' in event ? 'removed' : 'conversation'
    write(`event: ${name}\ndata: ${JSON.stringify(event[name])}\n\n`)
  })
  const keepAlive = setInterval(() => { write(': keep-alive\n\n') }, options.keepAliveMs)
  keepAlive.unref()
  streams.add(stream)
  raw.on('close', () => { end() })
  write('event: ready\ndata: {}\n\n')

  // Never called once the stream ended: the listener is gone and the timer cleared.
  function write (chunk: string): void {
    raw.write(chunk)
    // The client does not read: drop the connection (ending it politely would wait for the same client).
    if (raw.writableLength > options.maxBufferedBytes) end(true)
  }

  function end (abort = false): void {
    if (ended) return
    ended = true
    unsubscribe()
    clearInterval(keepAlive)
    streams.delete(stream)
    if (abort) raw.destroy()
    else raw.end()
  }
}

export interface EventsRouteOptions {
  /** Streams open at once; one more answers 503. */
  maxStreams: number
  keepAliveMs: number
  maxBufferedBytes: number
}

/** GET /api/v1/agents/:agentId/events; the streams still open end when the server closes (they would hold it open). */
export function eventsRoute (fastify: FastifyInstance, agents: ReadonlySet<string>, inbox: Pick<Inbox, 'follow'>, options: EventsRouteOptions): void {
  const { maxStreams, keepAliveMs, maxBufferedBytes } = options
  const streams: ConversationStreams = new Set()
  fastify.addHook('preClose', async () => { for (const stream of streams) stream.close() })
  fastify.get<{ Params: AgentParams }>('/api/v1/agents/:agentId/events', { schema: { params: agentParams } }, async (request, reply) => {
    const { agentId } = request.params
    if (!agents.has(agentId)) return notFound(reply, `unknown agent "${agentId}"`)
    if (streams.size >= maxStreams) {
      return reply.code(503).send({ statusCode: 503, error: 'Service Unavailable', message: `too many open inbox streams (${maxStreams}); try again later` })
    }
    reply.hijack()
    followConversations({ raw: reply.raw, agentId, inbox, streams, headers: reply.getHeaders(), keepAliveMs, maxBufferedBytes })
  })
}
