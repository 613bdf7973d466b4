/**
 * The turns of a routine (runtime/turn-plan.ts decides which kind a turn is): a typed call, a step of the routine
 * waiting for input or approval, a routine recognised in plain text — each changes the conversation's copy `next`
 * and answers in a task at the routine's status (a refused call: a Message saying why).
 */
import { TaskState } from '@a2a-js/sdk'
import type { ConverseEnvelope, Invocation } from '../core/envelope.js'
import type { RoutineDeclaration } from '../core/routine-declarations.js'
import type { TypedCall } from '../core/typed-call.js'
import type { ConversationRoutine, ConversationState } from '../stores/conversation-store.js'
import { dataPart, textPart } from './agent-messages.js'
import type { RoutineEngine } from './routine-engine.js'
import { interpretRoutineMessage } from './routine-message.js'
import { parseSlotInput, type WirePart } from './slot-input.js'
import type { TurnInput } from './turn-input.js'
import type { MessagePlan, TaskPlan } from './turn-plan.js'

export interface RoutineTurns {
  /** A typed routine call: the routine runs (a task), or the call is refused in a Message saying why. */
  call: (next: ConversationState, call: TypedCall, active: ConversationRoutine | undefined, base: ConverseEnvelope, input: TurnInput) => MessagePlan | TaskPlan
  /** A message to the routine waiting for input or approval: values, an approval, or a cancel. */
  step: (next: ConversationState, active: ConversationRoutine, parts: WirePart[], base: ConverseEnvelope, input: TurnInput) => TaskPlan
  /** A routine recognised in a plain message starts; pairs in the opening sentence ("book a table, date=…") fill slots. */
  start: (next: ConversationState, declaration: RoutineDeclaration, parts: WirePart[], base: ConverseEnvelope, input: TurnInput) => TaskPlan
  /**
   * The routine this conversation was in is no longer declared (the agent was changed while it waited: docs/routines.md):
   * the task ends (CANCELED) saying so, and the conversation is out of it; the next message starts afresh.
   */
  dropped: (next: ConversationState, dropped: ConversationRoutine, base: ConverseEnvelope) => TaskPlan
}

export function routineTurns (engine: RoutineEngine, newId: () => string): RoutineTurns {
  const routinePlan = (routine: ConversationRoutine, base: ConverseEnvelope, note?: string, invocation?: Invocation): TaskPlan =>
    routineStatusPlan(engine, newId, routine, base, note, invocation)

  function call (next: ConversationState, typed: TypedCall, active: ConversationRoutine | undefined, base: ConverseEnvelope, input: TurnInput): MessagePlan | TaskPlan {
    const result = engine.invoke(typed.toolName, typed.arguments, active)
    const note = result.errors?.join('; ')
    if (result.progress !== undefined) {
      next.routine = { ...result.progress, taskId: input.taskId }
      return routinePlan(next.routine, base, note, result.invocation)
    }
    // unknown_tool, declined, not_started: nothing runs, the conversation's routine stays as it was.
    const envelope: ConverseEnvelope = { ...base, invocation: result.invocation }
    const declaration = result.declaration
    if (declaration === undefined) {
      return { kind: 'message', parts: [textPart(`There is no routine called "${typed.toolName}".`)], envelope }
    }
    if (result.pendingInput !== undefined) {
      // not_started (only exposed routines can be called): `routine` says what a corrected call must supply.
      envelope.routine = { toolName: declaration.toolName, name: declaration.name, status: 'waiting_for_input', pendingInput: result.pendingInput }
    }
    return { kind: 'message', parts: [textPart(`${declaration.name}: ${note as string}`)], envelope }
  }

  function step (next: ConversationState, active: ConversationRoutine, parts: WirePart[], base: ConverseEnvelope, input: TurnInput): TaskPlan {
    const meaning = interpretRoutineMessage(parts, {
      slots: (engine.declaration(active.routine) as RoutineDeclaration).slots,
      pending: engine.pendingInput(active),
      awaitingApproval: active.status === 'waiting_for_approval'
    })
    let progress: ConversationRoutine
    let note: string | undefined
    if (meaning.kind === 'cancel') {
      progress = engine.abandon(active)
    } else if (meaning.kind === 'approval') {
      progress = meaning.approved ? engine.approve(active) : engine.decline(active)
    } else {
      const filled = engine.fill(active, meaning.values)
      progress = filled.progress
      if (filled.rejected.length > 0) note = filled.rejected.map((entry) => entry.reason).join('; ')
      else if (filled.accepted.length === 0) note = "I couldn't read a value from that."
    }
    next.routine = { ...progress, taskId: input.taskId }
    return routinePlan(next.routine, base, note)
  }

  function start (next: ConversationState, declaration: RoutineDeclaration, parts: WirePart[], base: ConverseEnvelope, input: TurnInput): TaskPlan {
    const started = engine.start(declaration.name, parseSlotInput(parts, { slots: declaration.slots }).values)
    next.routine = { ...started.progress, taskId: input.taskId }
    const note = started.rejected.length > 0 ? started.rejected.map((entry) => entry.reason).join('; ') : undefined
    return routinePlan(next.routine, base, note)
  }

  function dropped (next: ConversationState, routine: ConversationRoutine, base: ConverseEnvelope): TaskPlan {
    next.routine = undefined
    const text = `Sorry, I can no longer finish "${routine.routine}": this agent has changed since we started and no longer offers it. ` +
      'Nothing was done. You are welcome to ask me something else.'
    return { kind: 'task', state: TaskState.TASK_STATE_CANCELED, parts: [textPart(text)], envelope: base }
  }

  return { call, step, start, dropped }
}

/**
 * The reply for a routine at `routine`'s status, with the invocation when the turn began from a call: every routine
 * turn answers with it (a completed routine's confirmation as an artifact).
 */
function routineStatusPlan (
  engine: RoutineEngine, newId: () => string, routine: ConversationRoutine, base: ConverseEnvelope, note?: string, invocation?: Invocation
): TaskPlan {
  const envelope: ConverseEnvelope = { ...base, routine: engine.routineState(routine) }
  if (invocation !== undefined) envelope.invocation = invocation
  const text = note === undefined ? engine.prompt(routine) : `${note}\n${engine.prompt(routine)}`
  switch (routine.status) {
    case 'completed': {
      const declaration = engine.declaration(routine.routine) as RoutineDeclaration
      const confirmation = { routine: routine.routine, toolName: declaration.toolName, confirmationId: newId(), values: routine.values }
      return {
        kind: 'task',
        state: TaskState.TASK_STATE_COMPLETED,
        parts: [textPart(text)],
        envelope,
        artifact: { name: `${routine.routine} confirmation`, parts: [dataPart(confirmation), textPart(text)] }
      }
    }
    case 'abandoned':
      return { kind: 'task', state: TaskState.TASK_STATE_CANCELED, parts: [textPart(text)], envelope }
    default:
      return { kind: 'task', state: TaskState.TASK_STATE_INPUT_REQUIRED, parts: [textPart(text)], envelope }
  }
}
