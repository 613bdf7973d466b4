/**
 * Writes a service's stream reply on a Node `ServerResponse` (Fastify's `reply.raw` after `hijack()`, an Express
 * `res`): status, headers (those the door already set, then the reply's), each frame as it comes with
 * backpressure honoured (waits for `drain`), then the end. When the client goes away (`close` before the end)
 * the controller is aborted, which ends the frames. No timers; listeners are removed when the stream settles.
 */
import type { ServerResponse } from 'node:http'
import type { StreamReply } from '../bindings/jsonrpc/binding.js'

/** Settles when the response has ended; never rejects. */
export async function writeStream (raw: ServerResponse, reply: StreamReply, controller: AbortController): Promise<void> {
  const abort = (): void => controller.abort()
  raw.on('close', abort)
  try {
    for (const [name, value] of Object.entries(reply.headers)) raw.setHeader(name, value)
    raw.writeHead(reply.status)
    raw.flushHeaders()
    for await (const chunk of reply.frames) {
      if (!raw.write(chunk)) await drained(raw)
      if (controller.signal.aborted) break
    }
  } finally {
    raw.off('close', abort)
    if (!raw.writableEnded) raw.end()
  }
}

function drained (raw: ServerResponse): Promise<void> {
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
