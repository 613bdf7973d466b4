/**
 * Typed routine calls (the envelope's `invocation`): a tool call of an exposed routine starts it, re-enters it or is
 * refused, with the outcome the extension names. routine-engine.ts hands in its own steps (start, fill, abandon).
 */
import type { ErrorObject } from 'ajv'
import type { Invocation, InvocationOutcome, PendingInput } from '../core/envelope.js'
import type { RoutineDeclaration } from '../core/routine-declarations.js'
import type { RoutineProgress } from '../stores/conversation-store.js'
import { formatCallErrors, isTerminal, type CompiledRoutine, type FillResult } from './compiled-routine.js'

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

/** The engine's steps a call takes. */
export interface RoutineSteps {
  start: (name: string, values?: Record<string, unknown>) => FillResult
  fill: (progress: RoutineProgress, values: Record<string, unknown>) => FillResult
  pendingInput: (progress: RoutineProgress) => PendingInput[]
  abandon: (progress: RoutineProgress) => RoutineProgress
}

/** The engine's options that decide a call (routine-engine.ts's RoutineEngineOptions). */
export interface CallPolicy {
  refuse?: (call: RoutineCall) => boolean | string | undefined
  otherRoutineActive: 'abandon' | 'decline'
}

/**
 * A typed call of the routine `compiled` (undefined: no exposed routine has that tool name), with the conversation's
 * active routine: the outcome, the envelope's `invocation`, and the progress to store.
 */
export function invokeRoutine (
  compiled: CompiledRoutine | undefined, toolName: string, args: unknown, active: RoutineProgress | undefined, steps: RoutineSteps, policy: CallPolicy
): InvokeResult {
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
  const refusal = policy.refuse?.({ toolName, declaration, arguments: args, active: open })
  if (refusal === true || (typeof refusal === 'string')) {
    return declined(typeof refusal === 'string' && refusal !== '' ? refusal : `${toolName} refused the call`)
  }
  const reentering = open !== undefined && open.routine === declaration.name
  if (open !== undefined && !reentering && policy.otherRoutineActive === 'decline') {
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
      pendingInput: steps.pendingInput(reentering ? open : steps.start(declaration.name).progress)
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
      pendingInput: steps.pendingInput(filled.progress)
    }
    if (filled.rejected.length > 0) result.errors = filled.rejected.map((entry) => entry.reason)
    return result
  }
  if (reentering) return progressed('reentered', steps.fill(open, values))
  const result = progressed('started', steps.start(declaration.name, values))
  if (open !== undefined) result.abandoned = steps.abandon(open)
  return result
}
