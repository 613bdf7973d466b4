/**
 * Deciding a turn, with no effects: the conversation as stored and the user's message in; what the turn answers (a
 * plan), the conversation to store and the task the turn supersedes out. The conversation executor
 * (packages/a2a-converse/src/runtime/conversation-executor.ts) runs it under the store's per-conversation lock, then
 * does what it says once the store committed: the plan becomes events (packages/a2a-converse/src/runtime/turn-events.ts).
 */
import { Message, TaskState, type Part } from '@a2a-js/sdk'
import type { ConverseEnvelope, OwnershipState } from '../core/envelope.js'
import { readTypedCall, type TypedCall } from '../core/typed-call.js'
import { messageContentDigest } from '../stores/message-replays.js'
import type { ConversationState, ConversationTurn, HumanReply } from '../stores/conversation-store.js'
import type { KnowledgeBase } from './knowledge-base.js'
import { answerTurn } from './knowledge-executor.js'
import { agentMessage, dataPart, textPart } from './agent-messages.js'
import { isTerminal, type RoutineEngine } from './routine-engine.js'
import { createTriggerMatcher } from './routine-triggers.js'
import { messageText, readableParts, toWireParts, type WirePart } from './slot-input.js'
import { routineTurns } from './routine-turns.js'
import type { TurnInput } from './turn-input.js'

/** A reply in a Message (no task): a knowledge answer, a refused typed call, or the note on a repeated messageId. */
export interface MessagePlan {
  kind: 'message'
  parts: Part[]
  envelope: ConverseEnvelope
  /** The message's referenceTaskIds. */
  references?: string[]
  /** A repeated messageId: nothing is decided or recorded, the first turn stands. */
  repeat?: true
}

/** A repeated messageId whose first reply is kept: that Message again, or the task that holds the first reply. */
export interface ReplayPlan { kind: 'replay', message?: Message, task?: { taskId: string, turnId: string } }

/** A reply in a task: a routine's step, or a turn held for a person. */
export interface TaskPlan {
  kind: 'task'
  state: TaskState
  parts: Part[]
  envelope: ConverseEnvelope
  artifact?: { name: string, parts: Part[] }
  /** A person's replies written before this (human-owned) turn, delivered into its task first. */
  replies?: HumanReply[]
}

export type Plan = MessagePlan | ReplayPlan | TaskPlan

/** A decided turn. */
export interface Turn {
  plan: Plan
  /** The conversation to store; undefined for a repeated messageId (nothing is written, the first turn stands). */
  next?: ConversationState
  /** A Message plan's reply, as the client gets it (a new turn's is kept with the turn, so a retry gets it again). */
  reply?: Message
  /** The task the conversation left open, to close once this turn (which answers in a new task) committed. */
  supersedes?: { taskId: string, turnId: string }
  /** The turn creates its task: its slot under the caller's cap is taken before the turn is recorded. */
  opensTask: boolean
}

export interface TurnPlannerOptions {
  engine: RoutineEngine
  knowledgeBase: KnowledgeBase
  newId: () => string
  /** Characters of a message's text the turn reads (slot-input.ts's maxReadCharsOf). */
  maxReadChars: number
}

export type TurnPlanner = (state: Readonly<ConversationState>, input: TurnInput) => Turn

/**
 * The conversation's latest user turn whose reply went into a task (turns answered by a Message carry no taskId):
 * the task the conversation holds open, if that task is still open. A person's reply (inbox) goes there too.
 */
export function lastTaskTurn (state: Pick<ConversationState, 'turns'>): (ConversationTurn & { taskId: string }) | undefined {
  for (let index = state.turns.length - 1; index >= 0; index--) {
    const turn = state.turns[index]
    if (turn.role === 'user' && turn.taskId !== undefined) return turn as ConversationTurn & { taskId: string }
  }
  return undefined
}

/**
 * The user turn that carried this messageId, among the turns the conversation keeps (the most recent
 * ConversationLimits.maxTurns, 50 by default: about 25 messages and their replies).
 */
export function firstTurnOf (state: Pick<ConversationState, 'turns'>, messageId: string): ConversationTurn | undefined {
  return state.turns.find((turn) => turn.role === 'user' && turn.messageId === messageId)
}

/**
 * The typed call of a message, when the request activated the extension and the message lists it. A malformed
 * call never reaches here through the A2A endpoint (its request check answers -32602); behind another endpoint
 * it counts as no call, so the turn is a plain message and no envelope names an invalid toolName.
 */
export function typedCallOf (message: Pick<Message, 'extensions' | 'metadata'>, activated: boolean): TypedCall | undefined {
  const reading = readTypedCall(message, activated)
  return reading.kind === 'call' ? reading.call : undefined
}

/** The envelope every reply of a turn starts from. */
export function envelopeBase (turnId: string, requestMessageId: string, ownership: OwnershipState = 'ai_owned'): ConverseEnvelope {
  return {
    author: 'agent',
    answerCoverage: { availability: 'not_recorded', originatingTurnId: turnId, originatingRequestId: requestMessageId },
    ownership: { state: ownership, suppressed: false }
  }
}

export function createTurnPlanner (options: TurnPlannerOptions): TurnPlanner {
  const { engine, knowledgeBase, newId, maxReadChars } = options
  const recognise = createTriggerMatcher(engine.declarations)
  const routines = routineTurns(engine, newId)

  /** What a new message gets; `next` (the conversation's copy) takes the routine and inbox changes. */
  function planOf (next: ConversationState, parts: WirePart[], input: TurnInput): MessagePlan | TaskPlan {
    const base = envelopeBase(input.turnId, input.message.messageId)
    if (next.ownership === 'human_owned') return heldTurn(next, base)
    const active = next.routine !== undefined && !isTerminal(next.routine) ? next.routine : undefined
    if (active !== undefined && engine.declaration(active.routine) === undefined) return routines.dropped(next, active, base)
    const call = typedCallOf(input.message, input.activated)
    if (call !== undefined) return routines.call(next, call, active, base, input)
    if (active !== undefined) return routines.step(next, active, parts, base, input)
    const text = messageText(parts)
    const declaration = recognise(text)
    if (declaration !== undefined) return routines.start(next, declaration, parts, base, input)
    const answered = answerTurn(text, { knowledgeBase, requestMessageId: input.message.messageId, turnId: input.turnId })
    return { kind: 'message', parts: answered.parts, envelope: answered.envelope }
  }

  return (state, input) => {
    const first = firstTurnOf(state, input.message.messageId)
    if (first !== undefined) return repeatTurn(state, first, input, newId)
    const { message, turnId, at } = input
    // A shallow copy: the plan replaces the fields it changes, never mutates what it was given.
    const next: ConversationState = { ...state, turns: [...state.turns] }
    if (input.callerId !== undefined) next.caller = { id: input.callerId, contextId: input.contextId }
    const parts = readableParts(toWireParts(message.parts), maxReadChars)
    const plan = planOf(next, parts, input)
    const previous = lastTaskTurn(state)
    const turn: Turn = { plan, next, opensTask: plan.kind === 'task' && input.existingTaskId === undefined }
    if (plan.kind === 'task' && previous !== undefined && previous.taskId !== input.taskId) {
      turn.supersedes = { taskId: previous.taskId, turnId: previous.id }
    }
    // A turn names its task only when its reply went into that task (a Message reply is in no task).
    const taskId = plan.kind === 'task' ? input.taskId : undefined
    if (plan.kind === 'message') turn.reply = messageOf(plan, input, newId)
    next.turns.push({
      id: turnId,
      at,
      role: 'user',
      text: messageText(parts),
      taskId,
      messageId: message.messageId,
      content: messageContentDigest(message),
      reply: turn.reply === undefined ? undefined : JSON.stringify(Message.toJSON(turn.reply))
    })
    if (!plan.envelope.ownership?.suppressed) {
      // The envelope goes with the turn: the inbox's trace shows what the client was told.
      next.turns.push({ id: newId(), at, role: 'agent', text: messageText(toWireParts(plan.parts)), taskId, envelope: plan.envelope })
    }
    return turn
  }
}

/** The Message a message plan answers with. */
function messageOf (plan: MessagePlan, input: TurnInput, newId: () => string): Message {
  const message = agentMessage({ messageId: newId(), contextId: input.contextId, taskId: input.existingTaskId, parts: plan.parts, envelope: plan.envelope })
  message.referenceTaskIds = plan.references ?? []
  return message
}

/**
 * A message whose messageId the conversation already holds is a retry (a client that lost the reply): it must
 * not run again (a second booking). The dispatcher answers most retries before they get here (replayOf); this is
 * the copy that raced the first one, decided under the conversation's lock, so parallel copies and copies sent to
 * other instances (PostgreSQL's row lock) see the first one. It gets the first reply: the kept Message, or the
 * task holding the first reply. A turn an earlier version stored (no reply kept), or a copy with other content
 * (refused at the dispatcher when it comes after the first; here it came at once), is answered with a Message
 * that says so and names the task holding the first reply (referenceTaskIds), if any.
 */
function repeatTurn (state: Readonly<ConversationState>, first: ConversationTurn, input: TurnInput, newId: () => string): Turn {
  const messageId = first.messageId as string
  const same = first.content === undefined || first.content === messageContentDigest(input.message)
  if (same && first.reply !== undefined) return { plan: { kind: 'replay', message: Message.fromJSON(JSON.parse(first.reply)) }, opensTask: false }
  if (same && first.taskId !== undefined) return { plan: { kind: 'replay', task: { taskId: first.taskId, turnId: first.id } }, opensTask: false }
  // (A same-content turn with a task was replayed above.)
  const where = same ? 'answered' : 'answered; this copy has other content'
  const plan: MessagePlan = {
    kind: 'message',
    repeat: true,
    parts: [textPart(`Message ${messageId} was already received and ${where}.`)],
    envelope: envelopeBase(first.id, messageId, state.ownership),
    references: first.taskId === undefined ? [] : [first.taskId]
  }
  return { plan, reply: messageOf(plan, input, newId), opensTask: false }
}

/** A turn held for a person: a person's replies written since the last turn (there was no task for them) go in. */
function heldTurn (next: ConversationState, base: ConverseEnvelope): TaskPlan {
  const replies = next.inbox
  next.inbox = []
  return {
    kind: 'task',
    state: TaskState.TASK_STATE_WORKING,
    // No generated text: a data part says the turn waits for a person (A2A needs at least one part).
    parts: [dataPart({ ownership: 'human_owned', suppressed: true })],
    envelope: { ...base, ownership: { state: 'human_owned', suppressed: true } },
    replies
  }
}
