import type { FastifyReply } from 'fastify'
import { stringifyWithKnownEnvelopes } from '../core/envelope-json.js'
import type { Metadata } from '../core/wire.js'

/**
 * Serializes this JSON reply with the known JSON text of its deep-frozen envelopes spliced in (see
 * src/core/envelope-json.ts); the text is what JSON.stringify gives. Only where Fastify would use JSON.stringify
 * itself: a reply serializer of the instance (setReplySerializer) or one the handler gave the reply
 * (reply.serializer) decides the text as usual. (A route with a response schema never gets here: the plugin
 * knows its routes' schemas from registration.)
 */
export function useKnownEnvelopeJson (reply: FastifyReply, holders: readonly Metadata[]): void {
  if (!serializesWithJsonStringify(reply)) return
  reply.serializer(function serializeWithKnownEnvelopes (payload: unknown): string {
    return stringifyWithKnownEnvelopes(payload, holders, JSON.stringify) ?? JSON.stringify(payload)
  })
}

interface ReplyInternals {
  /** Set by reply.serializer(fn); null when none. */
  serializer: symbol
  /** The route context, whose replySerializerDefault comes from setReplySerializer; null when none. */
  context: symbol
  defaultSerializer: symbol
}

/**
 * Fastify offers no getter for either serializer; it keeps them under internal symbols, found here once, by
 * their descriptions. On a Fastify without them no reply qualifies, which only leaves serialization to Fastify.
 */
let internals: ReplyInternals | null | undefined

export function serializesWithJsonStringify (reply: FastifyReply): boolean {
  if (internals === undefined) internals = findReplyInternals(reply)
  if (internals === null) return false
  const fields = reply as unknown as Record<symbol, unknown>
  const context = fields[internals.context] as Record<symbol, unknown>
  return fields[internals.serializer] === null && context[internals.defaultSerializer] === null
}

/** The internal symbols, or null when this Fastify does not have them all. */
export function findReplyInternals (reply: object): ReplyInternals | null {
  const serializer = symbolNamed(reply, 'fastify.reply.serializer')
  const context = symbolNamed(reply, 'fastify.context')
  if (serializer === undefined || context === undefined) return null
  const contextObject = (reply as Record<symbol, unknown>)[context]
  const defaultSerializer = typeof contextObject === 'object' && contextObject !== null
    ? symbolNamed(contextObject, 'fastify.replySerializerDefault')
    : undefined
  return defaultSerializer === undefined ? null : { serializer, context, defaultSerializer }
}

/** A symbol key with this description on the object or its prototypes (the route context is a getter). */
function symbolNamed (object: object, description: string): symbol | undefined {
  for (let current: object | null = object; current !== null; current = Object.getPrototypeOf(current)) {
    const key = Object.getOwnPropertySymbols(current).find((symbol) => symbol.description === description)
    if (key !== undefined) return key
  }
  return undefined
}
