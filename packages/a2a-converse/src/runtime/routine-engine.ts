/**
 * The routine engine: pure, framework-free state transitions of a routine (slots, steps, approval) and typed
 * routine calls (the envelope's `invocation`). Nothing here does I/O; a progress is a plain JSON object that a
 * store persists between turns. See docs/routines.md for the state machine and the rules in prose.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import type {
  Invocation, InvocationOutcome, PendingInput, RoutineState, RoutineStatus, SlotType
} from '../core/envelope.js'
import { ConverseError, ERROR_CODES } from '../core/errors.js'
import {
  validateRoutineDeclarations, type RoutineDeclaration, type SlotDeclaration
} from '../core/routine-declarations.js'
import { routineInputSchema, type ToolInputSchema } from '../core/tool-descriptors.js'
import type { RoutineProgress } from '../stores/conversation-store.js'

// What a store persists between turns is declared with the store (stores sit below the runtime).
export type { RoutineProgress }

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

/** What `invoke` answers for a typed routine call. */
export interface InvokeResult {
  outcome: InvocationOutcome
  /** The envelope's `invocation` member for the reply. */
  invocation: Invocation
  /** The routine the call addressed; absent for `unknown_tool`. */
  declaration?: RoutineDeclaration
  /**
   * `started` / `reentered`: the routine's new progress, to store for the conversation. Absent for the other
   * outcomes: the conversation's routine (if any) stays as it was.
   */
  progress?: RoutineProgress
  /** `started` only: another routine that was active and that this call abandoned (see `otherRoutineActive`). */
  abandoned?: RoutineProgress
  /** Why: for `unknown_tool`, `declined`, `not_started`, and for values a `reentered` call could not use. */
  errors?: string[]
  /** `started` / `reentered`: the progress's pendingInput; `not_started`: what the caller must supply. */
  pendingInput?: PendingInput[]
}

/** What a refuse hook sees. */
export interface RoutineCall {
  toolName: string
  declaration: RoutineDeclaration
  arguments: unknown
  /** The conversation's routine in progress, if any (any routine, not only this one). */
  active?: RoutineProgress
}

export interface RoutineEngineOptions {
  /** Clock for `startedAt` / `updatedAt` / `endedAt`. Default: `() => new Date()`. */
  now?: () => Date
  /**
   * Lets the agent refuse a typed call of an enabled routine (e.g. an operator switch kept elsewhere, a quota).
   * Return true or a reason string to refuse (outcome `declined`); false / undefined to let it through.
   * Synchronous on purpose: fetch what it needs before calling `invoke`.
   */
  refuse?: (call: RoutineCall) => boolean | string | undefined
  /**
   * A typed call starts a routine while a *different* routine is active in the conversation:
   * - `'abandon'` (default): the active routine is abandoned (returned as `abandoned`) and the new one starts —
   *   an explicit call is the user's latest intention;
   * - `'decline'`: the call is `declined` and the active routine continues.
   * Either way nothing happens to the active routine when the call itself is `unknown_tool`, `declined` or
   * `not_started`.
   */
  otherRoutineActive?: 'abandon' | 'decline'
}

/** A transition that the routine's current status does not allow (e.g. approving a completed routine). */
export class RoutineStateError extends ConverseError {
  readonly routine: string
  readonly status: RoutineStatus
  constructor (routine: string, status: RoutineStatus, operation: string) {
    super(ERROR_CODES.ROUTINE_STATE, `routine "${routine}" is ${status}: cannot ${operation}`)
    this.routine = routine
    this.status = status
  }
}

/** A progress or a call names a routine the engine does not declare. */
export class UnknownRoutineError extends ConverseError {
  readonly routine: string
  constructor (routine: string) {
    super(ERROR_CODES.UNKNOWN_ROUTINE, `routine "${routine}" is not declared`)
    this.routine = routine
  }
}

export interface RoutineEngine {
  /** The declarations, as validated at creation (a private copy: later edits of the input have no effect). */
  readonly declarations: readonly RoutineDeclaration[]
  /** The declaration with that name, or undefined. */
  declaration (name: string): RoutineDeclaration | undefined
  /** The EXPOSED routine with that toolName, or undefined (non-exposed routines cannot be called by name). */
  byToolName (toolName: string): RoutineDeclaration | undefined
  /** The routine's tool input schema: `routineInputSchema` of its declaration, computed once. */
  inputSchema (name: string): ToolInputSchema
  /** Begins a routine; `initialValues` are filled as by `fill`. Throws UnknownRoutineError. */
  start (name: string, initialValues?: Record<string, unknown>): FillResult
  /** Accepts the valid values, rejects the others with a reason; re-evaluates status and step. */
  fill<P extends RoutineProgress>(progress: P, values: Record<string, unknown>): FillResult<P>
  /** waiting_for_approval → completed. */
  approve<P extends RoutineProgress>(progress: P): P
  /** waiting_for_approval → abandoned (approval `declined`). */
  decline<P extends RoutineProgress>(progress: P): P
  /** Any open status → abandoned (the user cancelled, CancelTask, or another routine replaced it). */
  abandon<P extends RoutineProgress>(progress: P): P
  /** Every required slot still open + the current step's open optional slots; [] unless waiting_for_input. */
  pendingInput (progress: RoutineProgress): PendingInput[]
  /** The envelope's `routine` member. */
  routineState (progress: RoutineProgress): RoutineState
  /** A sentence to show the user for where the routine stands (declared prompts first). */
  prompt (progress: RoutineProgress): string
  /** A typed routine call (the envelope's `invocation`). */
  invoke (toolName: string, args: unknown, active?: RoutineProgress): InvokeResult
}

/** True when the status (or the progress's status) is final: `completed` or `abandoned`. */
export function isTerminal (progress: RoutineProgress | RoutineStatus): boolean {
  const status = typeof progress === 'string' ? progress : progress.status
  return status === 'completed' || status === 'abandoned'
}

interface CompiledSlot {
  declaration: SlotDeclaration
  /** Index of the slot's step; slots without a step belong to the first step. */
  stepIndex: number
  /** Validates `{ [key]: value }` with type coercion; mutates its argument (callers pass a fresh holder). */
  validate: ValidateFunction
}

interface CompiledRoutine {
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

/**
 * Creates an engine for a set of routine declarations. Validates them (throws RoutineDeclarationError) and
 * compiles, once per routine, the tool input schema and one coercing validator per slot.
 */
export function createRoutineEngine (declarations: readonly RoutineDeclaration[], options: RoutineEngineOptions = {}): RoutineEngine {
  validateRoutineDeclarations(declarations)
  const now = options.now ?? (() => new Date())
  const otherRoutineActive = options.otherRoutineActive ?? 'abandon'
  const refuse = options.refuse
  const owned: RoutineDeclaration[] = structuredClone([...declarations])

  // Calls are checked strictly (a model sends JSON: "4" is not an integer); user input is coerced.
  const strictAjv = new Ajv({ allErrors: true })
  const coercingAjv = new Ajv({ allErrors: true, coerceTypes: true })

  const byName = new Map<string, CompiledRoutine>()
  const byTool = new Map<string, CompiledRoutine>()
  for (const declaration of owned) {
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
    const compiled: CompiledRoutine = {
      declaration,
      inputSchema,
      validateCall: strictAjv.compile(inputSchema),
      validateReentry: strictAjv.compile({ ...inputSchema, required: [] }),
      slots,
      keysByLowerCase
    }
    byName.set(declaration.name, compiled)
    if (declaration.exposed === true) byTool.set(declaration.toolName as string, compiled)
  }

  function compiledOf (name: string): CompiledRoutine {
    const compiled = byName.get(name)
    if (compiled === undefined) throw new UnknownRoutineError(name)
    return compiled
  }

  function openRequired (compiled: CompiledRoutine, values: Record<string, unknown>): CompiledSlot[] {
    return [...compiled.slots.values()].filter((slot) => slot.declaration.required === true && !(slot.declaration.key in values))
  }

  /** Status and step from the values: the one place the state machine's forward moves are decided. */
  function evaluate<P extends RoutineProgress> (compiled: CompiledRoutine, progress: P, values: Record<string, unknown>, at: string): P {
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

  /** `at`: the fill's time; a start passes its own, so a new progress has one time for `startedAt` and `updatedAt`. */
  function fillValues<P extends RoutineProgress> (compiled: CompiledRoutine, progress: P, input: Record<string, unknown>, at = now().toISOString()): FillResult<P> {
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

  function assertOpen (progress: RoutineProgress, operation: string): void {
    if (isTerminal(progress)) throw new RoutineStateError(progress.routine, progress.status, operation)
  }

  function pendingInput (progress: RoutineProgress): PendingInput[] {
    const compiled = compiledOf(progress.routine)
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

  function start (name: string, initialValues: Record<string, unknown> = {}): FillResult {
    const compiled = compiledOf(name)
    const at = now().toISOString()
    const fresh: RoutineProgress = { routine: name, status: 'active', values: {}, stepIndex: 0, startedAt: at, updatedAt: at }
    return fillValues(compiled, fresh, initialValues, at)
  }

  function invoke (toolName: string, args: unknown, active?: RoutineProgress): InvokeResult {
    const compiled = byTool.get(toolName)
    if (compiled === undefined) {
      return {
        outcome: 'unknown_tool',
        invocation: { toolName, outcome: 'unknown_tool' },
        errors: [`no exposed routine has the tool name "${toolName}"`]
      }
    }
    const declaration = compiled.declaration
    const open = active !== undefined && !isTerminal(active) ? active : undefined
    const declined = (reason: string): InvokeResult => ({
      outcome: 'declined', invocation: { toolName, outcome: 'declined' }, declaration, errors: [reason]
    })
    if (declaration.enabled === false) return declined(`${toolName} is disabled`)
    const refusal = refuse?.({ toolName, declaration, arguments: args, active: open })
    if (refusal === true || (typeof refusal === 'string')) {
      return declined(typeof refusal === 'string' && refusal !== '' ? refusal : `${toolName} refused the call`)
    }
    const reentering = open !== undefined && open.routine === declaration.name
    if (open !== undefined && !reentering && otherRoutineActive === 'decline') {
      return declined(`another routine (${open.routine}) is in progress; finish or cancel it first`)
    }
    // A call without arguments is a call with {}: it fails only when the routine requires something.
    const input = args === undefined ? {} : args
    const validate = reentering ? compiled.validateReentry : compiled.validateCall
    if (!validate(input)) {
      return {
        outcome: 'not_started',
        invocation: { toolName, outcome: 'not_started' },
        declaration,
        errors: formatCallErrors(validate.errors as ErrorObject[]),
        pendingInput: reentering ? pendingInput(open) : pendingInput(start(declaration.name).progress)
      }
    }
    const values = input as Record<string, unknown>
    // started and reentered answer alike: the new progress, what it still waits for, and why values were refused.
    const progressed = (outcome: 'started' | 'reentered', filled: FillResult): InvokeResult => {
      const result: InvokeResult = {
        outcome,
        invocation: { toolName, outcome },
        declaration,
        progress: filled.progress,
        pendingInput: pendingInput(filled.progress)
      }
      if (filled.rejected.length > 0) result.errors = filled.rejected.map((entry) => entry.reason)
      return result
    }
    if (reentering) return progressed('reentered', fillValues(compiled, open, values))
    const result = progressed('started', start(declaration.name, values))
    if (open !== undefined) result.abandoned = abandon(open)
    return result
  }

  function abandon<P extends RoutineProgress> (progress: P): P {
    compiledOf(progress.routine)
    assertOpen(progress, 'abandon')
    const at = now().toISOString()
    return { ...progress, status: 'abandoned', updatedAt: at, endedAt: at }
  }

  function answerApproval<P extends RoutineProgress> (progress: P, approved: boolean): P {
    compiledOf(progress.routine)
    if (progress.status !== 'waiting_for_approval') {
      throw new RoutineStateError(progress.routine, progress.status, approved ? 'approve' : 'decline')
    }
    const at = now().toISOString()
    return {
      ...progress,
      status: approved ? 'completed' : 'abandoned',
      approval: approved ? 'approved' : 'declined',
      updatedAt: at,
      endedAt: at
    }
  }

  function prompt (progress: RoutineProgress): string {
    const compiled = compiledOf(progress.routine)
    const declaration = compiled.declaration
    switch (progress.status) {
      case 'waiting_for_input': {
        const stepPrompt = progress.step === undefined
          ? undefined
          : declaration.steps?.find((step) => step.id === progress.step)?.prompt
        if (stepPrompt !== undefined && stepPrompt.trim() !== '') return stepPrompt
        const pending = pendingInput(progress)
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

  return {
    declarations: owned,
    declaration: (name) => byName.get(name)?.declaration,
    byToolName: (toolName) => byTool.get(toolName)?.declaration,
    inputSchema: (name) => compiledOf(name).inputSchema,
    start,
    fill (progress, values) {
      const compiled = compiledOf(progress.routine)
      assertOpen(progress, 'fill slots')
      return fillValues(compiled, progress, values)
    },
    approve: (progress) => answerApproval(progress, true),
    decline: (progress) => answerApproval(progress, false),
    abandon,
    pendingInput,
    routineState (progress) {
      const declaration = compiledOf(progress.routine).declaration
      const state: RoutineState = { name: declaration.name, status: progress.status, pendingInput: pendingInput(progress) }
      return declaration.exposed === true ? { toolName: declaration.toolName, ...state } : state
    },
    prompt,
    invoke
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
function formatCallErrors (errors: ErrorObject[]): string[] {
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
