import type { ErrorObject } from 'ajv'
import { envelopeErrorMessage, validateEnvelope } from './envelope-schema.js'
import type { AnswerCoverage, ConverseEnvelope, EnvelopeMember } from './envelope.js'

const KNOWN = new Set<string>(['author', 'answerCoverage', 'ownership', 'routine', 'invocation', 'citations'])

export const DEFAULT_OWNERSHIP = Object.freeze({ state: 'ai_owned', suppressed: false } as const)
export const NOT_RECORDED: AnswerCoverage = Object.freeze({ availability: 'not_recorded' }) as AnswerCoverage
/** The degraded envelope when the provider throws or times out: nothing is known about the turn. */
export const FAILED_ENVELOPE: ConverseEnvelope = Object.freeze({
  answerCoverage: Object.freeze({ availability: 'failed' })
}) as ConverseEnvelope

export interface NormalizedEnvelope {
  envelope: ConverseEnvelope
  /** Present when the draft failed the schema: the members that were dropped and why (paths only, no data). */
  invalid?: { members: string[], errors: string[] }
}

/**
 * Turns a provider's draft into an envelope that passes the schema.
 * Missing members get their defaults (author `agent`, ownership `ai_owned`, coverage `not_recorded`);
 * members that fail the schema are dropped and `answerCoverage.availability` becomes `invalid`.
 */
export function normalizeEnvelope (draft: unknown): NormalizedEnvelope {
  if (draft === undefined || draft === null) {
    return { envelope: { author: 'agent', answerCoverage: NOT_RECORDED, ownership: DEFAULT_OWNERSHIP } }
  }
  if (typeof draft !== 'object' || Array.isArray(draft)) {
    return {
      envelope: { author: 'agent', answerCoverage: { availability: 'invalid' }, ownership: DEFAULT_OWNERSHIP },
      invalid: { members: ['(root)'], errors: ['envelope must be an object'] }
    }
  }
  const input = draft as Record<string, unknown>
  const candidate: Record<string, unknown> = {
    author: input.author ?? 'agent',
    answerCoverage: input.answerCoverage ?? NOT_RECORDED,
    ownership: input.ownership ?? DEFAULT_OWNERSHIP
  }
  if (input.routine !== undefined) candidate.routine = input.routine
  if (input.invocation !== undefined) candidate.invocation = input.invocation
  if (input.citations !== undefined) candidate.citations = input.citations
  const unknown = Object.keys(input).filter((key) => !KNOWN.has(key))

  // Always validate: with unknown members present, skipping it would leave a previous call's errors in place.
  const valid = validateEnvelope(candidate)
  if (valid && unknown.length === 0) return { envelope: candidate as unknown as ConverseEnvelope }

  const errors = valid ? [] : validateEnvelope.errors as ErrorObject[]
  const failing = new Set<string>(unknown)
  for (const error of errors) failing.add(memberOf(error))

  const envelope: Record<string, unknown> = {}
  for (const key of ['author', 'ownership', 'routine', 'invocation', 'citations'] as EnvelopeMember[]) {
    if (candidate[key] !== undefined && !failing.has(key)) envelope[key] = candidate[key]
  }
  envelope.answerCoverage = invalidCoverage(candidate.answerCoverage, failing.has('answerCoverage'))
  return {
    envelope: reorder(envelope) as unknown as ConverseEnvelope,
    invalid: {
      members: [...failing].sort(),
      errors: [
        ...unknown.map((key) => `/${key} is not an envelope member`),
        // instancePath is never empty (see memberOf).
        ...errors.map((error) => `${error.instancePath} ${envelopeErrorMessage(error)}`)
      ]
    }
  }
}

/**
 * The top-level member an ajv error is about. Nothing can fail at the root: the candidate is an object built
 * above from known members only, with answerCoverage always set, so every error has a member path.
 */
function memberOf (error: ErrorObject): string {
  return error.instancePath.split('/')[1]
}

/** `invalid` keeps the turn/request ids when they are themselves well-formed, never a verdict. */
function invalidCoverage (coverage: unknown, coverageFailed: boolean): AnswerCoverage {
  const result: AnswerCoverage = { availability: 'invalid' }
  if (coverageFailed) return result
  const { originatingTurnId, originatingRequestId } = coverage as AnswerCoverage
  if (originatingTurnId !== undefined) result.originatingTurnId = originatingTurnId
  if (originatingRequestId !== undefined) result.originatingRequestId = originatingRequestId
  return result
}

function reorder (envelope: Record<string, unknown>): Record<string, unknown> {
  const ordered: Record<string, unknown> = {}
  for (const key of ['author', 'answerCoverage', 'ownership', 'routine', 'invocation', 'citations']) {
    if (envelope[key] !== undefined) ordered[key] = envelope[key]
  }
  return ordered
}
