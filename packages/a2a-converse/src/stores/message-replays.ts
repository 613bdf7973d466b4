/**
 * Retries get the first reply back (docs/guarantees.md, "What a retry does"). An executor that records what it
 * answered each messageId (the conversation executor does, in the conversation's turns) offers `replayOf`; the
 * dispatcher asks it before running a SendMessage / SendStreamingMessage and, when the messageId was answered,
 * answers the retry itself: the first Message as it was, or the task as it stands now (GetTask's view). Nothing
 * runs again. A retry whose content differs from the first message's is refused (-32602 naming `message.messageId`).
 */
import { createHash, type Hash } from 'node:crypto'
import type { Message } from '@a2a-js/sdk'
import type { ServerCallContext } from '@a2a-js/sdk/server'
import { CONVERSE_EXTENSION_URI } from '../core/uri.js'
import { ConverseError, ERROR_CODES } from '../core/errors.js'

/** What a retry of a messageId gets. */
export type Replay =
  | { kind: 'message', message: Message }
  | { kind: 'task', taskId: string }
  /** The messageId was used for a message with other content. */
  | { kind: 'conflict' }

export interface MessageReplays {
  /**
   * What the message's messageId was answered with in the conversation `contextId` (as the client knows it), in the
   * caller's scope; undefined when it was not (a new message). A task reply is given once the task holds it.
   * `contextId` is '' for a message that starts a new conversation. May reject with an error the endpoint answers
   * (a new conversation past a per-caller bound: CallerCapError), before anything ran.
   */
  replayOf (message: Message, contextId: string, context: ServerCallContext): Promise<Replay | undefined>
}

export function hasReplays (executor: object): executor is MessageReplays {
  return typeof (executor as Partial<MessageReplays>).replayOf === 'function'
}

/** A retry whose messageId was used for other content: -32602 naming `message.messageId`. */
export class MessageIdReusedError extends ConverseError {
  readonly messageId: string

  constructor (messageId: string) {
    super(ERROR_CODES.MESSAGE_ID_REUSED, `messageId ${JSON.stringify(messageId.slice(0, 128))} was already used for a message with other content; a new message needs a new messageId`)
    this.messageId = messageId
  }
}

/**
 * What "the same message" means for a retry: its parts (each part's content, mediaType, filename and metadata) and
 * its typed call (`metadata[<converse URI>].call`). Other metadata (a client's trace ids), `extensions`,
 * `referenceTaskIds`, `contextId` and `taskId` may differ between attempts. Object keys are compared sorted, so
 * a client that serializes a data part's members in another order sends the same content. A SHA-256 hex digest:
 * 64 characters kept per turn whatever the message's size.
 */
export function messageContentDigest (message: Pick<Message, 'parts' | 'metadata'>): string {
  const call = (message.metadata?.[CONVERSE_EXTENSION_URI] as { call?: unknown } | undefined)?.call
  const hash = createHash('sha256')
  writeCanonicalJson(hash, [message.parts, call ?? null])
  return hash.digest('hex')
}

/** Characters JSON.stringify writes otherwise than as themselves (RFC 8259 §7: quote, backslash, controls). */
// eslint-disable-next-line no-control-regex -- the control characters are what is looked for
const ESCAPED = /["\\\u0000-\u001f]/

/**
 * JSON with object keys sorted and undefined members left out, bytes (raw parts) as base64, written to the hash piece
 * by piece: a message's megabyte of text is hashed as it is, never copied into a larger string first (the digest is
 * the one the whole JSON text would have).
 */
function writeCanonicalJson (hash: Hash, value: unknown): void {
  if (value === undefined || value === null) {
    hash.update('null')
  } else if (typeof value === 'string') {
    if (ESCAPED.test(value) || !value.isWellFormed()) hash.update(JSON.stringify(value))
    else hash.update('"').update(value).update('"')
  } else if (value instanceof Uint8Array) {
    hash.update(JSON.stringify(Buffer.from(value).toString('base64')))
  } else if (Array.isArray(value)) {
    hash.update('[')
    value.forEach((item, index) => {
      if (index > 0) hash.update(',')
      writeCanonicalJson(hash, item)
    })
    hash.update(']')
  } else if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      // An object's keys are distinct: never equal.
      .sort(([a], [b]) => a < b ? -1 : 1)
    hash.update('{')
    entries.forEach(([key, member], index) => {
      hash.update(`${index > 0 ? ',' : ''}${JSON.stringify(key)}:`)
      writeCanonicalJson(hash, member)
    })
    hash.update('}')
  } else {
    hash.update(JSON.stringify(value))
  }
}
