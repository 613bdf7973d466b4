/**
 * Reads a JSON-RPC request body from a Node request as the A2A service wants it, by the Fastify door's rules
 * (the Express door uses it; Fastify reads with its own parser):
 * no body and no Content-Type is `absent`; a body without Content-Type, or a media type other than
 * application/json or application/a2a+json (any parameters, any case), is `unsupported_media_type`; more bytes
 * than the limit (announced or received) is `too_large`, and reading stops there; an empty body is `absent` (the
 * official HTTP+JSON client sends Content-Type on bodiless POSTs: `:cancel`); anything JSON.parse refuses is
 * `invalid_json`.
 */
import type { IncomingMessage } from 'node:http'
import type { RequestBody } from '../bindings/jsonrpc/binding.js'

/** The JSON-RPC request media types accepted (application/a2a+json leniently, see docs/a2a-endpoint.md). */
export const ACCEPTED_CONTENT_TYPES: readonly string[] = Object.freeze(['application/json', 'application/a2a+json'])

/** The body, or undefined when the client went away before sending all of it. */
export async function readRequestBody (request: IncomingMessage, limit: number): Promise<RequestBody | undefined> {
  const contentType = request.headers['content-type']
  const length = request.headers['content-length']
  const hasBody = (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined
  if (contentType === undefined) return hasBody ? { kind: 'unsupported_media_type', contentType } : { kind: 'absent' }
  const mediaType = contentType.split(';', 1)[0].trim().toLowerCase()
  if (!ACCEPTED_CONTENT_TYPES.includes(mediaType)) return { kind: 'unsupported_media_type', contentType }
  if (length !== undefined && Number(length) > limit) return { kind: 'too_large', limit }
  const text = await readText(request, limit)
  if (text === undefined || text === TOO_LARGE) return text === undefined ? undefined : { kind: 'too_large', limit }
  if (text === '') return { kind: 'absent' }
  try {
    // JSON.parse makes `__proto__` / `constructor` plain own data members: inert, never a prototype.
    return { kind: 'json', value: JSON.parse(text) }
  } catch {
    return { kind: 'invalid_json' }
  }
}

const TOO_LARGE = Symbol('too large')

/** The body as UTF-8 text, TOO_LARGE past `limit` bytes (the rest is left unread), undefined if the client left. */
function readText (request: IncomingMessage, limit: number): Promise<string | typeof TOO_LARGE | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let received = 0
    const settle = (value: string | typeof TOO_LARGE | undefined): void => {
      request.off('data', onData)
      request.off('end', onEnd)
      request.off('close', onClose)
      resolve(value)
    }
    const onData = (chunk: Buffer): void => {
      received += chunk.length
      if (received > limit) {
        // Node discards the unread rest once the response is written.
        request.pause()
        settle(TOO_LARGE)
        return
      }
      chunks.push(chunk)
    }
    const onEnd = (): void => settle(Buffer.concat(chunks).toString('utf8'))
    const onClose = (): void => settle(undefined)
    request.on('data', onData)
    request.on('end', onEnd)
    request.on('close', onClose)
  })
}
