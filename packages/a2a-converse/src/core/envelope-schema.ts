import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import {
  AUTHORS, AVAILABILITIES, COVERAGES, COVERAGE_REASONS, INVOCATION_OUTCOMES, OWNERSHIP_STATES,
  ROUTINE_STATUSES, SLOT_TYPES, type ConverseEnvelope
} from './envelope.js'

/**
 * A non-empty string. Not `minLength: 1`: ajv checks minLength by counting the string's code points, a walk over
 * every character that was four fifths of an envelope's validation (~0.4 of ~0.55 µs with three citations);
 * "not the empty string" gives the same verdict at once. Its failure reads "must not be empty" (envelopeErrorMessage).
 */
const nonEmpty = { type: 'string', not: { const: '' } } as const
/** A `not` right under a member's schema is nonEmpty's; the one under answerCoverage's `else` is not. */
const NON_EMPTY_FAILURE = /\/properties\/[^/]+\/not$/

/** The one JSON Schema of the envelope (draft-07, what ajv's default export speaks). */
export const envelopeSchema = {
  $id: 'https://docs.radioso.ai/reference/a2a-converse-extension/v1/envelope.json',
  type: 'object',
  additionalProperties: false,
  required: ['answerCoverage'],
  properties: {
    author: { enum: AUTHORS },
    answerCoverage: {
      type: 'object',
      additionalProperties: false,
      required: ['availability'],
      properties: {
        availability: { enum: AVAILABILITIES },
        coverage: { enum: COVERAGES },
        reason: { enum: COVERAGE_REASONS },
        originatingTurnId: nonEmpty,
        originatingRequestId: nonEmpty
      },
      // An assessed verdict says what it found and why; the other availabilities carry no verdict.
      if: { properties: { availability: { const: 'assessed' } } },
      then: { required: ['coverage', 'reason'] },
      else: { not: { anyOf: [{ required: ['coverage'] }, { required: ['reason'] }] } }
    },
    ownership: {
      type: 'object',
      additionalProperties: false,
      required: ['state', 'suppressed'],
      properties: {
        state: { enum: OWNERSHIP_STATES },
        suppressed: { type: 'boolean' }
      }
    },
    routine: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'status', 'pendingInput'],
      properties: {
        toolName: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' },
        name: nonEmpty,
        status: { enum: ROUTINE_STATUSES },
        pendingInput: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['key', 'type', 'required', 'description'],
            properties: {
              key: nonEmpty,
              type: { enum: SLOT_TYPES },
              required: { type: 'boolean' },
              description: { type: 'string' }
            }
          }
        }
      }
    },
    invocation: {
      type: 'object',
      additionalProperties: false,
      required: ['toolName', 'outcome'],
      properties: {
        toolName: { type: 'string', minLength: 1, maxLength: 256 },
        outcome: { enum: INVOCATION_OUTCOMES }
      }
    },
    citations: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['documentId', 'chunkId', 'title'],
        properties: {
          documentId: nonEmpty,
          chunkId: nonEmpty,
          title: { type: 'string' },
          sourceUrl: { type: 'string', pattern: '^https?://' }
        }
      }
    }
  }
} as const

/** Compiled once at module load; every validation in the process uses this function. */
export const validateEnvelope: ValidateFunction<ConverseEnvelope> = new Ajv({ allErrors: true, strict: true, strictRequired: false })
  .compile<ConverseEnvelope>(envelopeSchema)

/** What an error of validateEnvelope says: ajv's message, but for nonEmpty's `not` ("must NOT be valid" says nothing). */
export function envelopeErrorMessage (error: ErrorObject): string {
  // ajv always sets `message` (messages: true is its default).
  return NON_EMPTY_FAILURE.test(error.schemaPath) ? 'must not be empty' : error.message as string
}
