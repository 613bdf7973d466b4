/**
 * The known-envelope serializer module as the converse plugin sees it with the splice switch on
 * (bench/fast-path-switches.ts): the same exports, except that `useKnownEnvelopeJson` leaves the reply to
 * Fastify's own serialization (it only counts the replies it was asked to splice).
 */
import type { FastifyReply } from 'fastify'
import type { Metadata } from '../src/core/wire.js'
import { switchCounts } from './fast-path-state.js'

export * from '../src/fastify/known-envelope-serializer.js'

switchCounts.serializerReplaced = true

export function useKnownEnvelopeJson (_reply: FastifyReply, _holders: readonly Metadata[]): void {
  switchCounts.splicesRefused++
}
