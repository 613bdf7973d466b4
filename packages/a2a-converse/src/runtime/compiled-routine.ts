/**
 * A routine declaration compiled once (its tool input schema, call validators, a coercing validator per slot) and
 * the pure moves on a progress that routine-engine.ts composes: filling values, deciding status and step, what is
 * still pending, the prompt. Nothing here does I/O or reads a clock (the time comes in as `at`).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import type { PendingInput, RoutineStatus, SlotType } from '../core/envelope.js'
import type { RoutineDeclaration, SlotDeclaration } from '../core/routine-declarations.js'
import { routineInputSchema, type ToolInputSchema } from '../core/tool-descriptors.js'
import type { RoutineProgress } from '../stores/conversation-store.js'

/** A value a fill could not use, and why. */
export interface RejectedValue {
  /** The key as received (it may not be a declared slot key). */
  key: string
  /** A human-readable sentence, e.g. `partySize must be an integer (got "four")`. */
  reason: string
}

export interface FillResult<P extends RoutineProgress = RoutineProgress> {
  progress: P
  /** Declared slot keys whose value was accepted, in input order. */
  accepted: string[]
  rejected: RejectedValue[]
}

export interface CompiledSlot {
  declaration: SlotDeclaration
  /** Index of the slot's step; slots without a step belong to the first step. */
  stepIndex: number
  /** Validates `{ [key]: value }` with type coercion; mutates its argument (callers pass a fresh holder). */
  validate: ValidateFunction
}

export interface CompiledRoutine {
  declaration: RoutineDeclaration
  inputSchema: ToolInputSchema
  /** The inputSchema as is: a call that starts the routine. */
  validateCall: ValidateFunction
  /** The inputSchema without `required`: a call that re-enters the routine (open slots may stay open). */
  validateReentry: ValidateFunction
  slots: Map<string, CompiledSlot>
  /** Declared slot keys by lower-cased key, for case-insensitive matching. */
  keysByLowerCase: Map<string, string>
}

const TYPE_NOUNS: Record<SlotType, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean (true or false)'
}

/** True when the status (or the progress's status) is final: `completed` or `abandoned`. */
export function isTerminal (progress: RoutineProgress | RoutineStatus): boolean {
  const status = typeof progress === 'string' ? progress : progress.status
  return status === 'completed' || status === 'abandoned'
}

/**
 * Compiles each declaration once: the tool input schema, the call validators (strict: a model sends JSON, "4" is not
 * an integer) and one coercing validator per slot (user input is coerced).
 */
export function compileRoutines (declarations: readonly RoutineDeclaration[]): Map<string, CompiledRoutine> {
  const strictAjv = new Ajv({ allErrors: true })
  const coercingAjv = new Ajv({ allErrors: true, coerceTypes: true })
  const byName = new Map<string, CompiledRoutine>()
  for (const declaration of declarations) {
    const inputSchema = routineInputSchema(declaration)
    const stepIds = (declaration.steps ?? []).map((step) => step.id)
    const slots = new Map<string, CompiledSlot>()
    const keysByLowerCase = new Map<string, string>()
    for (const slot of declaration.slots) {
      slots.set(slot.key, {
        declaration: slot,
        stepIndex: slot.step === undefined ? 0 : stepIds.indexOf(slot.step),
        validate: coercingAjv.compile({ type: 'object', properties: { [slot.key]: inputSchema.properties[slot.key] } })
      })
      // Keys differing only in case: the first declared wins the case-insensitive match; exact keys always match.
      if (!keysByLowerCase.has(slot.key.toLowerCase())) keysByLowerCase.set(slot.key.toLowerCase(), slot.key)
    }
    byName.set(declaration.name, {
      declaration,
      inputSchema,
      validateCall: strictAjv.compile(inputSchema),
      validateReentry: strictAjv.compile({ ...inputSchema, required: [] }),
      slots,
      keysByLowerCase
    })
  }
  return byName
}

function openRequired (compiled: CompiledRoutine, values: Record<string, unknown>): CompiledSlot[] {
  return [...compiled.slots.values()].filter((slot) => slot.declaration.required === true && !(slot.declaration.key in values))
}

/** Status and step from the values: the one place the state machine's forward moves are decided. */
export function evaluate<P extends RoutineProgress> (compiled: CompiledRoutine, progress: P, values: Record<string, unknown>, at: string): P {
  const steps = compiled.declaration.steps ?? []
  const open = openRequired(compiled, values)
  const stepIndex = steps.length === 0
    ? 0
    : open.length > 0 ? Math.min(...open.map((slot) => slot.stepIndex)) : steps.length - 1
  let status: RoutineStatus
  if (open.length > 0) status = 'waiting_for_input'
  else if (compiled.declaration.approval !== undefined) status = 'waiting_for_approval'
  else status = 'completed'
  const next: P = { ...progress, status, values, stepIndex, updatedAt: at }
  if (steps.length > 0) next.step = steps[stepIndex].id
  else delete next.step
  if (status === 'completed') next.endedAt = at
  return next
}

/** Fills values into a progress at `at` (a start passes its own, so a new progress has one time for `startedAt` and `updatedAt`). */
export function fillValues<P extends RoutineProgress> (compiled: CompiledRoutine, progress: P, input: Record<string, unknown>, at: string): FillResult<P> {
  const values = { ...progress.values }
  const accepted: string[] = []
  const rejected: RejectedValue[] = []
  for (const [received, raw] of Object.entries(input)) {
    if (raw === undefined) continue
    const key = compiled.slots.has(received) ? received : compiled.keysByLowerCase.get(received.toLowerCase())
    if (key === undefined) {
      rejected.push({
        key: received,
        reason: `"${received}" is not an input of ${compiled.declaration.name} (expected ${[...compiled.slots.keys()].join(', ') || 'none'})`
      })
      continue
    }
    const slot = compiled.slots.get(key) as CompiledSlot
    const result = coerceSlotValue(slot, raw)
    if ('reason' in result) {
      rejected.push({ key: received, reason: result.reason })
    } else {
      values[key] = result.value
      if (!accepted.includes(key)) accepted.push(key)
    }
  }
  return { progress: evaluate(compiled, progress, values, at), accepted, rejected }
}

/** Every required slot still open + the current step's open optional slots; [] unless waiting_for_input. */
export function pendingInputOf (compiled: CompiledRoutine, progress: RoutineProgress): PendingInput[] {
  if (progress.status !== 'waiting_for_input') return []
  const pending: PendingInput[] = []
  for (const slot of compiled.slots.values()) {
    const { key, type, required, description } = slot.declaration
    if (key in progress.values) continue
    if (required === true || slot.stepIndex === progress.stepIndex) {
      // Required slots always carry a description (validated); an optional one falls back to its key.
      pending.push({ key, type, required: required === true, description: description ?? key })
    }
  }
  return pending
}

/** A sentence to show the user for where the routine stands (declared prompts first). */
export function promptOf (compiled: CompiledRoutine, progress: RoutineProgress): string {
  const declaration = compiled.declaration
  switch (progress.status) {
    case 'waiting_for_input': {
      const stepPrompt = progress.step === undefined
        ? undefined
        : declaration.steps?.find((step) => step.id === progress.step)?.prompt
      if (stepPrompt !== undefined && stepPrompt.trim() !== '') return stepPrompt
      const pending = pendingInputOf(compiled, progress)
      const required = pending.filter((entry) => entry.required).map((entry) => `${entry.key} (${entry.description})`)
      const optional = pending.filter((entry) => !entry.required).map((entry) => entry.key)
      return `To ${lowerFirst(declaration.description).replace(/\.$/, '')}, please provide: ${required.join(', ')}.` +
        (optional.length > 0 ? ` Optionally also: ${optional.join(', ')}.` : '')
    }
    case 'waiting_for_approval':
      return declaration.approval?.prompt ?? `Shall I go ahead with ${declaration.name}? Reply yes to approve or no to decline.`
    case 'completed':
      return `${declaration.name} is complete.`
    case 'abandoned':
      return progress.approval === 'declined' ? `${declaration.name} was declined.` : `${declaration.name} was cancelled.`
    default:
      return `${declaration.name} is in progress.`
  }
}

/**
 * Coerces one value to its slot type (ajv coerceTypes on a private holder: the caller's value is never mutated).
 * On top of ajv's rules: null and blank strings are "empty", strings are trimmed, and non-finite numbers
 * (ajv turns "Infinity" into null) are refused.
 */
function coerceSlotValue (slot: CompiledSlot, raw: unknown): { value: unknown } | { reason: string } {
  const { key, type } = slot.declaration
  const value = typeof raw === 'string' ? raw.trim() : raw
  if (value === null || value === '') return { reason: `${key} is empty` }
  const holder: Record<string, unknown> = { [key]: value }
  const coerced = slot.validate(holder) ? holder[key] : undefined
  if (coerced === undefined || (typeof coerced === 'number' && !Number.isFinite(coerced))) {
    return { reason: `${key} must be ${TYPE_NOUNS[type]} (got ${preview(raw)})` }
  }
  return { value: coerced }
}

function preview (value: unknown): string {
  let json: string | undefined
  try {
    json = JSON.stringify(value)
  } catch {
    // BigInt and cyclic values: fall back to String() below.
  }
  const text = json ?? String(value)
  return text.length > 40 ? `${text.slice(0, 37)}...` : text
}

function lowerFirst (text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1)
}

/** ajv errors of a call as sentences that name the argument: "partySize must be integer", "date is required". */
export function formatCallErrors (errors: ErrorObject[]): string[] {
  const messages = errors.map((error) => {
    const path = error.instancePath.replace(/^\//, '').replace(/\//g, '.')
    if (error.keyword === 'required') return `${String(error.params.missingProperty)} is required`
    if (error.keyword === 'additionalProperties') {
      return `${String(error.params.additionalProperty)} is not an argument of this tool`
    }
    return `${path === '' ? 'arguments' : path} ${String(error.message)}`
  })
  return [...new Set(messages)]
}
