/**
 * ajv's errors worded as A2A `google.rpc.BadRequest` field violations: a path relative to `params`
 * (`message.parts[0]`) and a description a client can act on, at most MAX_VIOLATIONS of them.
 */
import type { ErrorObject } from 'ajv'
import type { FieldViolation } from './errors.js'
import { MAX_VIOLATIONS, PART_MEMBERS, UNRECOGNIZED_STATUS } from './param-values.js'

/** The first MAX_VIOLATIONS errors, each worded. */
export function toViolations (errors: readonly ErrorObject[]): FieldViolation[] {
  return errors.slice(0, MAX_VIOLATIONS).map(describe)
}

function describe (error: ErrorObject): FieldViolation {
  const field = pointerToField(error.instancePath)
  const parent = error.parentSchema as { a2aMessage?: string, minimum?: number, maximum?: number }
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'required':
      return { field: join(field, String(params.missingProperty)), description: 'is required' }
    case 'type':
      return at(field, `must be ${withArticle(String(params.type))}`)
    case 'enum':
      // Names only; "UNRECOGNIZED" is tolerated for the official client, not a value to advertise.
      return at(field, `must be one of ${(params.allowedValues as unknown[]).filter((v) => typeof v === 'string' && v !== UNRECOGNIZED_STATUS).join(', ')}`)
    case 'minItems':
      // Every minItems here is 1: REQUIRED arrays must not be empty (§5.7).
      return at(field, 'must have at least one item')
    case 'maxItems':
      return at(field, `must have at most ${String(params.limit)} items`)
    case 'minimum':
    case 'maximum':
      return at(field, parent.minimum !== undefined && parent.maximum !== undefined && parent.maximum < 2147483647
        ? `must be between ${parent.minimum} and ${parent.maximum}`
        : `must be ${error.keyword === 'minimum' ? '>=' : '<='} ${String(params.limit)}`)
    case 'a2aExactlyOne': {
      const present = PART_MEMBERS.filter((member) => Object.hasOwn(error.data as object, member))
      return at(field, present.length === 0
        ? `must have exactly one of ${PART_MEMBERS.join(', ')}; it has none`
        : `must have exactly one of ${PART_MEMBERS.join(', ')}; it has ${present.join(', ')}`)
    }
    case 'maxLength':
      return at(field, `must be at most ${String(params.limit)} characters`)
    case 'a2aNoNul':
      return at(field, 'must not contain U+0000')
    case 'a2aWellFormed':
      return at(field, 'must not contain an unpaired surrogate (U+D800 to U+DFFF)')
    case 'a2aTimestamp':
      return at(field, 'must be an RFC 3339 timestamp such as 2026-01-01T00:00:00.000Z')
    default:
      // minLength and pattern: each schema that uses them says what it means.
      return at(field, parent.a2aMessage ?? 'must not be empty')
  }
}

function at (field: string, description: string): FieldViolation {
  return { field: field === '' ? 'params' : field, description }
}

/** `/message/parts/0/text` → `message.parts[0].text` (JSON Pointer unescaped). */
function pointerToField (pointer: string): string {
  let field = ''
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    field = /^\d+$/.test(segment) ? `${field}[${segment}]` : join(field, segment)
  }
  return field
}

function join (field: string, member: string): string {
  return field === '' ? member : `${field}.${member}`
}

function withArticle (type: string): string {
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`
}
