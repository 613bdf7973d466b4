/**
 * The routine engine: pure, framework-free state transitions of a routine (slots, steps, approval) and typed
 * routine calls (the envelope's `invocation`). Nothing here does I/O; a progress is a plain JSON object that a
 * store persists between turns. The compiled declarations and the pure moves on a progress are compiled-routine.ts.
 * See docs/routines.md for the state machine and the rules in prose.
 */
import type { PendingInput, RoutineState, RoutineStatus } from '../core/envelope.js'
import { ConverseError, ERROR_CODES } from '../core/errors.js'
import { validateRoutineDeclarations, type RoutineDeclaration } from '../core/routine-declarations.js'
import type { ToolInputSchema } from '../core/tool-descriptors.js'
import type { RoutineProgress } from '../stores/conversation-store.js'
import { compileRoutines, fillValues, isTerminal, pendingInputOf, promptOf, type CompiledRoutine, type FillResult } from './compiled-routine.js'
import { invokeRoutine, type InvokeResult, type RoutineCall } from './routine-call.js'

// What a store persists between turns is declared with the store (stores sit below the runtime).
export type { RoutineProgress }
export type { FillResult, RejectedValue } from './compiled-routine.js'
export type { InvokeResult, RoutineCall } from './routine-call.js'
export { isTerminal }

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

/**
 * Creates an engine for a set of routine declarations. Validates them (throws RoutineDeclarationError) and
 * compiles, once per routine, the tool input schema and one coercing validator per slot.
 */
export function createRoutineEngine (declarations: readonly RoutineDeclaration[], options: RoutineEngineOptions = {}): RoutineEngine {
  validateRoutineDeclarations(declarations)
  const now = options.now ?? (() => new Date())
  const otherRoutineActive = options.otherRoutineActive ?? 'abandon'
  const owned: RoutineDeclaration[] = structuredClone([...declarations])

  const byName = compileRoutines(owned)
  const byTool = new Map([...byName.values()].filter(({ declaration }) => declaration.exposed === true).map((compiled) => [compiled.declaration.toolName as string, compiled]))

  function compiledOf (name: string): CompiledRoutine {
    const compiled = byName.get(name)
    if (compiled === undefined) throw new UnknownRoutineError(name)
    return compiled
  }

  function assertOpen (progress: RoutineProgress, operation: string): void {
    if (isTerminal(progress)) throw new RoutineStateError(progress.routine, progress.status, operation)
  }

  function pendingInput (progress: RoutineProgress): PendingInput[] {
    return pendingInputOf(compiledOf(progress.routine), progress)
  }

  function start (name: string, initialValues: Record<string, unknown> = {}): FillResult {
    const compiled = compiledOf(name)
    const at = now().toISOString()
    const fresh: RoutineProgress = { routine: name, status: 'active', values: {}, stepIndex: 0, startedAt: at, updatedAt: at }
    return fillValues(compiled, fresh, initialValues, at)
  }

  function fill<P extends RoutineProgress> (progress: P, values: Record<string, unknown>): FillResult<P> {
    const compiled = compiledOf(progress.routine)
    assertOpen(progress, 'fill slots')
    return fillValues(compiled, progress, values, now().toISOString())
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

  return {
    declarations: owned,
    declaration: (name) => byName.get(name)?.declaration,
    byToolName: (toolName) => byTool.get(toolName)?.declaration,
    inputSchema: (name) => compiledOf(name).inputSchema,
    start,
    fill,
    approve: (progress) => answerApproval(progress, true),
    decline: (progress) => answerApproval(progress, false),
    abandon,
    pendingInput,
    routineState (progress) {
      const declaration = compiledOf(progress.routine).declaration
      const state: RoutineState = { name: declaration.name, status: progress.status, pendingInput: pendingInput(progress) }
      return declaration.exposed === true ? { toolName: declaration.toolName, ...state } : state
    },
    prompt: (progress) => promptOf(compiledOf(progress.routine), progress),
    invoke (toolName, args, active) {
      return invokeRoutine(byTool.get(toolName), toolName, args, active, { start, fill, pendingInput, abandon }, { refuse: options.refuse, otherRoutineActive })
    }
  }
}
