/**
 * The conversation executor: one @a2a-js/sdk AgentExecutor that composes the building blocks behind the envelope —
 * knowledge answers (answerCoverage, citations), routines with slots (routine), typed routine calls (invocation)
 * and human takeover (ownership, author). Each turn is decided, then done: the planner (turn-plan.ts) decides it
 * under the conversation store's per-conversation lock and the store commits the conversation it returns; then the
 * task the turn supersedes is closed (superseded-task.ts) and its events are published (turn-events.ts).
 * A message sent again gets its first reply (turn-replays.ts); CancelTask ends a task and its routine (task-cancel.ts).
 *
 * A conversation has at most one open task: a turn that answers in a new task (a message with the contextId only)
 * closes the task the previous turn left waiting for input or held for a person (CANCELED, "Continued in task …").
 */
import { randomUUID } from 'node:crypto'
import type { Message } from '@a2a-js/sdk'
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server'
import { MessageIdReusedError, messageContentDigest, type MessageReplays } from '../stores/message-replays.js'
import { CallerCapError, callerKeyOf } from '../stores/caller-key.js'
import type { RoutineDeclaration } from '../core/routine-declarations.js'
export type { TypedCall } from '../core/typed-call.js'
import { ConverseError, ERROR_CODES, isConverseError, type ErrorCode } from '../core/errors.js'
import { conversationKey, newConversationState, type ConversationState, type ConversationStore } from '../stores/conversation-store.js'
import type { TaskEventHub } from '../events/task-event-hub.js'
import { reservesTasks } from '../stores/task-reservations.js'
import { inConversationSpan } from '../stores/traced-conversations.js'
import { traceContextIn } from '../telemetry/tracing.js'
import type { KnowledgeBase } from './knowledge-base.js'
import { dataPart, humanMessage } from './agent-messages.js'
import { createRoutineEngine, type RoutineEngine, type RoutineEngineOptions } from './routine-engine.js'
import { maxReadCharsOf } from './slot-input.js'
import { supersededTaskCloser } from './superseded-task.js'
import { cancelConversationTask } from './task-cancel.js'
import { taskTurnEvents } from './turn-events.js'
import { turnInput, type TurnInput } from './turn-input.js'
import { createTurnPlanner, firstTurnOf, type Turn, type TurnPlanner } from './turn-plan.js'
import { publishReplay, replayOf, type FreshConversation } from './turn-replays.js'
import type { PublishesTurnAtOnce } from '../stores/deferred-task-saves.js'

export interface ConversationExecutorOptions {
  agentId: string
  knowledgeBase: KnowledgeBase
  routines?: readonly RoutineDeclaration[]
  store: ConversationStore
  /**
   * The agent's task store (the one its A2A endpoint uses). When a turn answers in a new task (a message with the
   * contextId only), the task the conversation left open is closed here (CANCELED, pointing to the new task)
   * instead of waiting forever. A store that signals its saves (packages/a2a-converse/src/stores/task-save-signals.ts: the gateway's
   * memory and PostgreSQL stores) lets that close wait for the old task's last save without polling; with any
   * other store, a close that finds the old task still being written waits the whole bound (SETTLE_TIMEOUT_MS).
   * A store that reserves new tasks (packages/a2a-converse/src/stores/task-reservations.ts: the gateway's stores) is asked for a new task's
   * slot before the turn is recorded, so a caller at MAX_OPEN_TASKS_PER_CALLER is refused with nothing written.
   */
  taskStore: TaskStore
  /**
   * Live task events (the hub the A2A endpoint relays to open streams). The close of a task left open is published
   * here, so a stream waiting on that task (SubscribeToTask on an INPUT_REQUIRED task) gets it and ends.
   */
  events?: Pick<TaskEventHub, 'publish'>
  /** Passed to the routine engine (refuse hook, other-routine rule, clock). */
  engine?: RoutineEngineOptions
  newId?: () => string
  /**
   * Characters of a message's text the runtime reads: searched, matched and kept in the conversation (the task
   * keeps the whole message). Default DEFAULT_MAX_READ_CHARS (slot-input.ts).
   */
  maxReadChars?: number
}

/**
 * The errors a turn may end with whose message the caller may read (the SDK words it into the FAILED task): a cap,
 * a busy task, the store down or closing, a routine's state, the envelope provider's timeout, a reused messageId. Any other error's
 * message (a driver's words, a bug) stays in the log.
 */
const CALLER_READABLE: ReadonlySet<ErrorCode> = new Set([
  ERROR_CODES.CAP_REACHED, ERROR_CODES.TASK_BUSY, ERROR_CODES.STORE_UNAVAILABLE, ERROR_CODES.STORE_CLOSED, ERROR_CODES.ROUTINE_STATE,
  ERROR_CODES.UNKNOWN_ROUTINE, ERROR_CODES.ROUTINE_DECLARATION, ERROR_CODES.INVALID_OPTION, ERROR_CODES.PROVIDER_TIMEOUT,
  ERROR_CODES.UNAUTHENTICATED, ERROR_CODES.AUTHENTICATION_UNAVAILABLE, ERROR_CODES.REQUEST_HOST, ERROR_CODES.RATE_LIMITED, ERROR_CODES.TURN_FAILED,
  ERROR_CODES.MESSAGE_ID_REUSED
])

/** What recording a turn takes from its executor. */
interface TurnRecording {
  agentId: string
  store: ConversationStore
  taskStore: TaskStore
  newId: () => string
  plan: TurnPlanner
  /** replayOf's read per request, and the requests whose conversation it found new (turn-replays.ts). */
  reads: WeakMap<ServerCallContext, ConversationState>
  fresh: WeakMap<ServerCallContext, FreshConversation>
}

/**
 * Decides the turn under the conversation's lock and records it; the store calls `plan` again when it retries, so
 * only the last decision counts. A turn that opens a task takes its slot under the caller's cap first: outside the
 * update (a store's one session may be held by it), so the first update writes nothing and the turn is decided
 * again once the slot is taken; refused, nothing is written. On a conversation replayOf found new, the turn is
 * decided on the new state first, and its slot taken before the one update: the store's first write is then its
 * one-statement insert (issue 43). Created meanwhile by another request, the conversation is decided again on its
 * state (a slot taken for nothing holds until it expires, as one whose write failed). A store that bounds
 * conversations per caller in its write (no `admit`) refuses a new one there: the turn then ends with that refusal.
 */
async function recordTurn (recording: TurnRecording, requestContext: RequestContext): Promise<Turn> {
  const { agentId, store, taskStore, newId, plan, reads, fresh } = recording
  const input = turnInput(requestContext, newId())
  const key = conversationKey(input.callerId, requestContext.contextId)
  const trace = traceContextIn(requestContext.context.state)
  // A task store without reservations has no slot to take: every turn counts as reserved.
  const reservations = reservesTasks(taskStore) ? taskStore : undefined
  let reserved = reservations === undefined
  let turn: Turn | undefined
  const read = reads.get(requestContext.context)
  reads.delete(requestContext.context)
  const found = fresh.get(requestContext.context)
  fresh.delete(requestContext.context)
  const foundNone = found !== undefined
  // Decided on the new state before the update: the update's first call on no state takes that decision.
  let decided = foundNone ? plan(newConversationState(agentId, key), input) : undefined
  if (decided?.opensTask === true && reservations !== undefined && !reserved) {
    // A store that joins the turn's write to its task saves takes the reservation into their statement, ahead of it.
    if (store.joinsTaskSaves === true && reservations.reserveWithSaves !== undefined) await reservations.reserveWithSaves(requestContext.taskId, requestContext.context)
    else await reservations.reserve(requestContext.taskId, requestContext.context)
    reserved = true
  }
  const options = { owner: callerKeyOf(requestContext.context), read: read?.contextId === key ? read : undefined, context: requestContext.context, foundNone, newContextId: found === 'new id' }
  const update = async (): Promise<void> => {
    try {
      await inConversationSpan(store, 'update', agentId, requestContext.contextId, trace, async () => await store.update(agentId, key, (current) => {
        if (current !== undefined) assertNotReused(current, input, options.read)
        const decision = current === undefined && decided !== undefined ? decided : plan(current ?? newConversationState(agentId, key), input)
        turn = decision
        decided = undefined
        return decision.opensTask && !reserved ? undefined : decision.next
      }, options))
    } catch (error) {
      // A new conversation past its caller's bound, refused by the store's write (a store without `admit`), or a
      // reused messageId found under the lock: the SDK's FAILED task for this turn is refused alike, so the request
      // answers -32000 / -32602 and no task is stored.
      if (error instanceof CallerCapError || error instanceof MessageIdReusedError) reservations?.refuse(requestContext.taskId, error)
      throw error
    }
  }
  await update()
  if ((turn as Turn).opensTask && reservations !== undefined && !reserved) {
    await reservations.reserve(requestContext.taskId, requestContext.context)
    reserved = true
    await update()
  }
  return turn as Turn
}

/**
 * The retry check (replayOf) read `read`, a state the store kept (ConversationGetOptions.recent), and the stored one
 * has moved since (another instance wrote it): a copy of a message answered meanwhile, with other content, is refused
 * (-32602) as the check would have refused it on the stored state. Without a kept read (or on the state read), a copy
 * found here came at once with the first one, and gets a Message that says so (turn-plan.ts). A message for a stored
 * task is left to that Message too: the SDK's FAILED save of a refused turn would end its task.
 */
function assertNotReused (current: ConversationState, input: TurnInput, read: ConversationState | undefined): void {
  if (read === undefined || read.version === current.version || input.existingTaskId !== undefined) return
  const first = firstTurnOf(current, input.message.messageId)
  if (first?.content !== undefined && first.content !== messageContentDigest(input.message)) throw new MessageIdReusedError(input.message.messageId)
}

/** A turn failed for a reason that is not the caller's to read (its cause is logged, never sent). */
export class TurnFailedError extends ConverseError {
  constructor (cause: unknown) {
    super(ERROR_CODES.TURN_FAILED, 'the turn could not be completed')
    this.cause = cause
  }
}

export { dataPart, humanMessage }

export function conversationExecutor (options: ConversationExecutorOptions): AgentExecutor & MessageReplays & PublishesTurnAtOnce & { engine: RoutineEngine } {
  const { agentId, knowledgeBase, store, taskStore } = options
  const newId = options.newId ?? randomUUID
  const engine = createRoutineEngine(options.routines ?? [], options.engine)
  const plan = createTurnPlanner({ engine, knowledgeBase, newId, maxReadChars: maxReadCharsOf(options.maxReadChars) })
  const closeSuperseded = supersededTaskCloser({ taskStore, events: options.events, newId })
  /**
   * The conversation replayOf read for a request (its call context), handed to the turn's update as `read`: a store
   * may then write without reading it again (ConversationUpdateOptions.read), so a turn reads it once.
   */
  const reads = new WeakMap<ServerCallContext, ConversationState>()
  /** The requests whose conversation replayOf found new (none stored under its key). */
  const fresh = new WeakMap<ServerCallContext, FreshConversation>()

  const sources = { agentId, store, taskStore, engine, newId }
  const turns: TurnRecording = { agentId, store, taskStore, newId, plan, reads, fresh }

  async function runTurn (requestContext: RequestContext, eventBus: ExecutionEventBus): Promise<void> {
    const turn = await recordTurn(turns, requestContext)
    // The task left open is closed before this turn answers: a client that has the answer sees it closed.
    if (turn.supersedes !== undefined) await closeSuperseded(turn.supersedes, requestContext)
    const decided = turn.plan
    if (decided.kind === 'replay') await publishReplay(sources, decided, requestContext, eventBus)
    else if (decided.kind === 'message') eventBus.publish(AgentEvent.message(turn.reply as Message))
    else for (const event of taskTurnEvents(decided, requestContext, newId, new Date().toISOString())) eventBus.publish(event)
  }

  return {
    engine,
    // A turn is decided, then its events are published together (runTurn): a blocking turn's saves may be written
    // once (stores/deferred-task-saves.ts).
    publishesTurnAtOnce: true,
    async execute (requestContext, eventBus) {
      try {
        await runTurn(requestContext, eventBus)
      } catch (error) {
        // The SDK words a rejected turn into the FAILED task the caller reads ("Agent execution error: <message>"):
        // a named error of ours says what the caller may know; anything else (a driver's refusal, a bug) stays in
        // the log the SDK writes, with this error's cause.
        throw isConverseError(error) && CALLER_READABLE.has(error.code) ? error : new TurnFailedError(error)
      }
    },
    async replayOf (message, contextId, context) {
      return await replayOf(sources, reads, fresh, message, contextId, context)
    },
    async cancelTask (taskId, eventBus) {
      await cancelConversationTask(sources, taskId, eventBus)
    }
  }
}
