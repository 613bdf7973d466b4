/**
 * Node's request and reply as the web-standard `Request` and `Response` the MCP server SDK's HTTP handler
 * (`createMcpHandler(...).fetch`) takes and gives, for the MCP door.
 *
 * The door has read and parsed the body itself (its limit, its errors), so the `Request` carries none: the parsed
 * value goes to the handler as `parsedBody`. Its signal aborts when the client goes away before its reply, which
 * is how the SDK cancels the tool call (and with it the A2A call).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'

/** A body-less web `Request` of Node's request: method, URL (path and query), headers; and its abort. */
export function webRequestOf (request: IncomingMessage, response: ServerResponse): Request {
  const controller = new AbortController()
  // A client gone before its whole reply was written: the exchange is cancelled.
  response.once('close', () => { if (!response.writableFinished) controller.abort() })
  const headers = new Headers()
  const raw = request.rawHeaders
  for (let index = 0; index < raw.length; index += 2) headers.append(raw[index], raw[index + 1])
  // Only the path matters to the SDK (it reads no URL); a fixed origin keeps a Host header out of URL parsing.
  return new Request(new URL(request.url as string, 'http://mcp.invalid'), { method: request.method, headers, signal: controller.signal })
}

/** Writes a web `Response` on Node's reply: its status and headers, then its body (JSON at once, a stream as it comes). */
export async function writeWebResponse (answer: Response, response: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {}
  answer.headers.forEach((value, name) => { headers[name] = value })
  response.writeHead(answer.status, headers)
  const body = answer.body
  if (body === null) {
    response.end()
    return
  }
  if (answer.headers.get('content-type')?.startsWith('text/event-stream') !== true) {
    response.end(await answer.text())
    return
  }
  // An SSE stream (an older revision's reply): written frame by frame until it ends or the client goes away.
  const reader = body.getReader()
  const stop = (): void => { reader.cancel().then(undefined, ignore) }
  response.once('close', stop)
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      response.write(value)
    }
    /* c8 ignore start -- the SDK's stream fails only when its own transport does; the reply ends there */
  } catch {
    // Nothing more to write.
    /* c8 ignore stop */
  } finally {
    response.off('close', stop)
    response.end()
  }
}

/* c8 ignore next -- cancelling a web stream's reader does not reject; nothing to do if it did */
function ignore (): void {}
