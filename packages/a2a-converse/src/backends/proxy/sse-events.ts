/**
 * Server-sent events read from a byte stream, one `data` payload per event, pulled: the next chunk is read only
 * when the consumer asks for the next event, so a slow client slows the upstream (backpressure) and nothing
 * buffers a whole stream. An event larger than `maxEventBytes` is an error, never an unbounded buffer.
 */
import { ConverseError, ERROR_CODES } from '../../core/errors.js'

export class SseEventTooLargeError extends ConverseError {
  constructor (limit: number) {
    super(ERROR_CODES.SSE_EVENT_TOO_LARGE, `an event exceeds ${limit} bytes`)
  }
}

/**
 * Yields each event's data (its `data:` lines joined by "\n"); events without data (comments, keep-alives) are
 * skipped, other fields (event, id, retry) ignored. A final event without its blank line is dropped (the stream
 * was cut mid-event).
 */
export async function * sseEvents (body: AsyncIterable<Uint8Array>, maxEventBytes: number): AsyncGenerator<string, void, undefined> {
  const decoder = new TextDecoder()
  let pending = ''
  let data: string[] = []
  let size = 0
  for await (const chunk of body) {
    pending += decoder.decode(chunk, { stream: true })
    let start = 0
    for (;;) {
      const end = lineEnd(pending, start)
      if (end === -1) break
      const line = pending.slice(start, end)
      // \r\n counts as one line end.
      start = pending[end] === '\r' && pending[end + 1] === '\n' ? end + 2 : end + 1
      if (line === '') {
        if (data.length > 0) yield data.join('\n')
        data = []
        size = 0
        continue
      }
      if (line.startsWith('data')) {
        const value = line.length === 4 ? '' : line[4] === ':' ? line.slice(line[5] === ' ' ? 6 : 5) : undefined
        if (value !== undefined) {
          size += value.length + 1
          if (size > maxEventBytes) throw new SseEventTooLargeError(maxEventBytes)
          data.push(value)
        }
      }
    }
    pending = pending.slice(start)
    // A '\r' at the very end may be the first half of '\r\n': it waits for the next chunk (counted as one char).
    if (size + pending.length > maxEventBytes) throw new SseEventTooLargeError(maxEventBytes)
  }
}

/** Index of the next '\n' or '\r' from `from`; -1 when none (or a trailing '\r' whose '\n' may follow). */
function lineEnd (text: string, from: number): number {
  for (let index = from; index < text.length; index++) {
    const char = text.charCodeAt(index)
    if (char === 10) return index
    if (char === 13) return index === text.length - 1 ? -1 : index
  }
  return -1
}
