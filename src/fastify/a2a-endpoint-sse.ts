/**
 * Writes one JSON-RPC stream as Server-Sent Events on a raw Node response (after `reply.hijack()`).
 *
 * - Headers: the reply's own (A2A-Extensions echo included, copied because hijacked replies lose them) plus
 *   the SSE ones; status 200.
 * - Frames: `data: <JSON-RPC response with the request id>\n\n`, each result passed through `transform`
 *   (the converse decoration) first.
 * - Errors, before the first event or mid-stream: one `event: error` frame carrying the JSON-RPC error
 *   response, then the response ends.
 * - Client disconnect (`close` on the response) or `close()` (server shutting down): nothing more is
 *   written, the response ends, the source is released and returned. No timers; the one `close` listener is
 *   removed when the stream settles; backpressure is honoured (waits for `drain`).
 */
import type { ServerResponse } from 'node:http'
import {
  errorResponse, JSONRPC_VERSION, type JsonRpcError, type JsonRpcId
} from '../jsonrpc/errors.js'

export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no'
})

export interface SseStreamOptions {
  raw: ServerResponse
  /** Headers already set on the reply (`reply.getHeaders()`). */
  headers: Record<string, number | string | readonly string[] | undefined>
  id: JsonRpcId
  source: AsyncIterator<unknown, void, undefined>
  /** Called once per result before it is written. */
  transform (result: unknown): unknown
  /** Turns anything thrown by the source or the transform into the error to send. */
  toError (error: unknown): JsonRpcError
  /** Stops the source now when the stream ends before the source did. */
  release (): void
}

export interface SseStream {
  /** Settles when the response has ended; never rejects. */
  done: Promise<void>
  /** Ends the stream without writing anything more (server shutting down). */
  close (): void
}

const STOPPED = Symbol('stopped')

export function frame (id: JsonRpcId, result: unknown): string {
  return `data: ${JSON.stringify({ jsonrpc: JSONRPC_VERSION, id, result })}\n\n`
}

export function errorFrame (id: JsonRpcId, error: JsonRpcError): string {
  return `event: error\ndata: ${JSON.stringify(errorResponse(id, error))}\n\n`
}

export function openSseStream (options: SseStreamOptions): SseStream {
  const { raw, id, source } = options
  let stopped = false
  let interrupt: (() => void) | undefined
  const stop = (): void => {
    if (stopped) return
    stopped = true
    interrupt?.()
  }
  raw.on('close', stop)

  for (const [name, value] of Object.entries(options.headers)) {
    if (value !== undefined) raw.setHeader(name, value as string | number | string[])
  }
  for (const [name, value] of Object.entries(SSE_HEADERS)) raw.setHeader(name, value)
  raw.writeHead(200)
  raw.flushHeaders()

  const write = (chunk: string): Promise<void> | undefined => {
    if (raw.write(chunk)) return undefined
    return new Promise<void>((resolve) => {
      const resume = (): void => {
        raw.off('drain', resume)
        raw.off('close', resume)
        resolve()
      }
      raw.on('drain', resume)
      raw.on('close', resume)
    })
  }

  const run = async (): Promise<void> => {
    let finished = false
    try {
      while (true) {
        if (stopped) break
        // A fresh race per event (not Promise.race with one long-lived promise, which would keep a reaction
        // per event alive for the whole stream). A rejection after STOPPED settles nothing and is handled.
        const next = await new Promise<IteratorResult<unknown, void> | typeof STOPPED>((resolve, reject) => {
          interrupt = () => resolve(STOPPED)
          source.next().then(resolve, reject)
        })
        interrupt = undefined
        if (next === STOPPED) break
        if (next.done === true) {
          finished = true
          break
        }
        const result = await options.transform(next.value)
        if (stopped) break
        await write(frame(id, result))
      }
    } catch (error) {
      if (!stopped) await write(errorFrame(id, options.toError(error)))
    } finally {
      raw.off('close', stop)
      if (!finished) {
        options.release()
        source.return?.().then(undefined, noop)
      }
      if (!raw.writableEnded) raw.end()
    }
  }

  return { done: run(), close: stop }
}

function noop (): void {}
