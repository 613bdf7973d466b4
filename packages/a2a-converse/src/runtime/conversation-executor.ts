/**
 * The conversation executor: one @a2a-js/sdk AgentExecutor that composes the building blocks behind the envelope —
 * knowledge answers (answerCoverage, citations), routines with slots (routine), typed routine calls (invocation)
 * and human takeover (ownership, author). Conversation state lives in a ConversationStore, updated once per turn
 * under the store's per-conversation lock; events are published only after that update committed.
 *
 * A conversation has at most one open task: a turn that answers in a new task (a message with the contextId only)
 * closes the task the previous turn left waiting for input or held for a person (CANCELED, "Continued in task …").
 */
import { randomUUID } from 'node:crypto'
import { Message, TaskState, type Artifact, type Part, type Task } from '@a2a-js/sdk'
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server'
import { messageContentDigest, type MessageReplays } from '../stores/message-replays.js'
import { createTaskWriter } from '../events/task-writer.js'
import { callerIdOf } from '../auth/sdk-user.js'
import { callerKeyOf } from '../stores/caller-key.js'
import type { ConverseEnvelope, Invocation, OwnershipState } from '../core/envelope.js'
import type { RoutineDeclaration } from '../core/routine-declarations.js'
import { readTypedCall, type TypedCall } from '../core/typed-call.js'
export type { TypedCall } from '../core/typed-call.js'
import { CONVERSE_EXTENSION_URI } from '../core/uri.js'
import { ConverseError } from '../core/errors.js'
import {
  clientContextId, conversationKey, newConversationState, type ConversationRoutine, type ConversationState, type ConversationStore,
  type ConversationTurn, type HumanReply
} from '../stores/conversation-store.js'
import type { TaskEventHub } from '../events/task-event-hub.js'
import { loadWhen } from '../stores/task-save-signals.js'
import { reservesTasks, type TaskReservations } from '../stores/task-reservations.js'
import { inConversationSpan } from '../stores/traced-conversations.js'
import { traceContextIn } from '../telemetry/tracing.js'
import type { KnowledgeBase } from './knowledge-base.js'
import { answerTurn } from './knowledge-executor.js'
import { agentMessage, dataPart, humanMessage, textPart } from './agent-messages.js'
import { createRoutineEngine, isTerminal, type RoutineEngine, type RoutineEngineOptions } from './routine-engine.js'
import { createTriggerMatcher } from './routine-triggers.js'
import {
  interpretRoutineMessage, maxReadCharsOf, messageText, parseSlotInput, readableParts, toWireParts, type WirePart
} from './slot-input.js'

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

/** A turn failed for a reason that is not the caller's to read (its cause is logged, never sent). */
export class TurnFailedError extends ConverseError {
  constructor (cause: unknown) {
    super('A2A_CONVERSE_TURN_FAILED', 'the turn could not be completed')
    this.cause = cause
  }
}

/** Thrown out of a turn's conversation update (nothing written) to reserve its new task's slot first. */
const NEEDS_RESERVATION = new Error('the turn opens a task: reserve its slot first')

/** What a turn answers, decided under the conversation lock and published after it committed. */
type Plan =
  | {
    kind: 'message'
    parts: Part[]
    envelope: ConverseEnvelope
    /** The message's referenceTaskIds. */
    references?: string[]
    /** A repeated messageId: nothing is decided or recorded, the first turn stands. */
    repeat?: true
  }
  /** A repeated messageId whose first reply is kept: that Message again, or the task that holds the first reply. */
  | { kind: 'replay', message?: Message, task?: { taskId: string, turnId: string } }
  | {
    kind: 'task'
    state: TaskState
    parts: Part[]
    envelope: ConverseEnvelope
    artifact?: { name: string, parts: Part[] }
    /** A person's replies written before this (human-owned) turn, delivered into its task first. */
    replies?: HumanReply[]
  }

/**
 * How long a turn waits at most for a parallel turn's events to be persisted before closing that turn's task. The
 * wait ends at the save that settles the task, so this bound only counts when that save never comes (the other
 * turn's instance stopped mid-turn). It is not 1 s because parallel turns on one conversation form a chain: each
 * answers only after closing the task of the turn before it, so the last of N waits for N - 1 steps (a save, its
 * signal, a close): about 100 ms each across two instances on a loaded 2-core machine, so 1 s cut chains of ~10.
 */
export const SETTLE_TIMEOUT_MS = 5000

/**
 * How long the close of a superseded task keeps waiting, after the turn answered, for a task that was not yet stored
 * past its first save at SETTLE_TIMEOUT_MS.
 */
export const LATE_SETTLE_MS = 60_000

const FINAL_STATES: ReadonlySet<TaskState | undefined> = new Set([
  TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_REJECTED
])

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

/** Whether the task holds the reply of the turn `turnId` (its envelope's originatingTurnId), or is over. */
function settled (task: Task | undefined, turnId: string): boolean {
  if (task === undefined) return false
  if (FINAL_STATES.has(task.status?.state)) return true
  return task.history.some((message) => {
    const envelope = message.metadata?.[CONVERSE_EXTENSION_URI] as ConverseEnvelope | undefined
    return envelope?.answerCoverage?.originatingTurnId === turnId
  })
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

/** Whether the request that runs this turn activated the converse extension (the gateway always declares it). */
function requestActivated (requestContext: RequestContext): boolean {
  const requested = requestContext.context?.requestedExtensions as Iterable<string> | undefined
  return requested !== undefined && [...requested].includes(CONVERSE_EXTENSION_URI)
}

export { dataPart, humanMessage }

export function conversationExecutor (options: ConversationExecutorOptions): AgentExecutor & MessageReplays & { engine: RoutineEngine } {
  const { agentId, knowledgeBase, store, taskStore } = options
  const writer = createTaskWriter(taskStore, options.events)
  const newId = options.newId ?? randomUUID
  const engine = createRoutineEngine(options.routines ?? [], options.engine)
  const recognise = createTriggerMatcher(engine.declarations)
  const maxReadChars = maxReadCharsOf(options.maxReadChars)
  /** The message's parts as the turn reads them (see maxReadChars). */
  const read = (message: Message): WirePart[] => readableParts(toWireParts(message.parts), maxReadChars)

  function envelopeBase (turnId: string, requestMessageId: string, ownership: OwnershipState = 'ai_owned'): ConverseEnvelope {
    return {
      author: 'agent',
      answerCoverage: { availability: 'not_recorded', originatingTurnId: turnId, originatingRequestId: requestMessageId },
      ownership: { state: ownership, suppressed: false }
    }
  }

  /** The reply for a routine at `routine`'s status, with the invocation when the turn began from a call. */
  function routinePlan (routine: ConversationRoutine, base: ConverseEnvelope, note?: string, invocation?: Invocation): Plan {
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

  /**
   * Tasks left open by the turn before (new task id → the old task and the turn whose reply it holds), closed after
   * the turn that answers in the new task committed.
   */
  const superseded = new Map<string, { taskId: string, turnId: string }>()

  /** Decides the turn and updates the conversation state in place (the store commits it). */
  function decide (state: ConversationState, requestContext: RequestContext, turnId: string): Plan {
    // The store may call the update more than once: only the last call's decision counts.
    superseded.delete(requestContext.taskId)
    const first = firstTurnOf(state, requestContext.userMessage.messageId)
    if (first !== undefined) return repeatPlan(state, first, requestContext.userMessage)
    const previous = lastTaskTurn(state)
    const plan = decideTurn(state, requestContext, turnId)
    if (plan.kind === 'task' && previous !== undefined && previous.taskId !== requestContext.taskId) {
      superseded.set(requestContext.taskId, { taskId: previous.taskId, turnId: previous.id })
    }
    return plan
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
  function repeatPlan (state: ConversationState, first: ConversationTurn, message: Message): Plan {
    const messageId = first.messageId as string
    const same = first.content === undefined || first.content === messageContentDigest(message)
    if (same && first.reply !== undefined) return { kind: 'replay', message: Message.fromJSON(JSON.parse(first.reply)) }
    if (same && first.taskId !== undefined) return { kind: 'replay', task: { taskId: first.taskId, turnId: first.id } }
    // (A same-content turn with a task was replayed above.)
    const where = same ? 'answered' : 'answered; this copy has other content'
    return {
      kind: 'message',
      repeat: true,
      parts: [textPart(`Message ${messageId} was already received and ${where}.`)],
      envelope: envelopeBase(first.id, messageId, state.ownership),
      references: first.taskId === undefined ? [] : [first.taskId]
    }
  }

  /**
   * The task holding a turn's reply, once a save of it holds that reply (the first copy's request may still be
   * storing it, here or on another instance), or undefined when the store no longer keeps it.
   */
  async function taskOfTurn (taskId: string, turnId: string, context: ServerCallContext): Promise<Task | undefined> {
    return await loadWhen(taskStore, taskId, context, (task) => settled(task, turnId), SETTLE_TIMEOUT_MS)
  }

  /**
   * Closes the task the conversation left open when this turn answers in a new one: CANCELED, pointing to the new
   * task. The SDK persists a turn's events after the executor published them, so a parallel turn (on this instance
   * or another) may still be writing that task: wait until a save of it holds that turn's reply, re-reading it on
   * the store's save signals (loadWhen, never polling; at most SETTLE_TIMEOUT_MS), then write through a task writer
   * (stored — a task already over is left as it is — and published to its open streams).
   */
  async function closeSuperseded (requestContext: RequestContext): Promise<void> {
    const old = superseded.get(requestContext.taskId)
    if (old === undefined) return
    superseded.delete(requestContext.taskId)
    const context = requestContext.context
    const task = await loadWhen(taskStore, old.taskId, context, (task) => settled(task, old.turnId), SETTLE_TIMEOUT_MS)
    if (task === undefined || task.status?.state === TaskState.TASK_STATE_SUBMITTED) {
      // The other turn has not stored its answer within the bound (a long chain of parallel turns on a loaded
      // machine): this turn answers now, and the old task is closed once that save lands (LATE_SETTLE_MS at most;
      // a turn whose instance stopped never saves, and its task stays as it is). Closing it now instead would make
      // that turn's own save fail (a finished task stays finished), and its client be told an error.
      loadWhen(taskStore, old.taskId, context, (late) => settled(late, old.turnId), LATE_SETTLE_MS)
        .then(async (late) => { await close(late, old.taskId, requestContext) })
        // Nothing waits for this: a store failure leaves the old task open, as a turn that never saved does.
        .catch(() => {})
      return
    }
    await close(task, old.taskId, requestContext)
  }

  /** Writes the close of `task` (CANCELED, pointing to this turn's task) when it is still open. */
  async function close (task: Task | undefined, taskId: string, requestContext: RequestContext): Promise<void> {
    const state = task?.status?.state
    if (state !== TaskState.TASK_STATE_INPUT_REQUIRED && state !== TaskState.TASK_STATE_WORKING) return
    const base = envelopeBase(newId(), requestContext.userMessage.messageId)
    const message = replyOf(requestContext, [textPart(`Continued in task ${requestContext.taskId}.`)], base, taskId)
    message.referenceTaskIds = [requestContext.taskId]
    const update = {
      taskId,
      contextId: requestContext.contextId,
      status: { state: TaskState.TASK_STATE_CANCELED, message, timestamp: new Date().toISOString() },
      metadata: undefined
    }
    await writer.write(update, requestContext.context)
  }

  function decideTurn (state: ConversationState, requestContext: RequestContext, turnId: string): Plan {
    const message = requestContext.userMessage
    const parts = read(message)
    const base = envelopeBase(turnId, message.messageId)

    if (state.ownership === 'human_owned') {
      // A person's replies written since the last turn (there was no task to put them in) go into this one.
      const replies = state.inbox
      state.inbox = []
      return {
        kind: 'task',
        state: TaskState.TASK_STATE_WORKING,
        // No generated text: a data part says the turn waits for a person (A2A needs at least one part).
        parts: [dataPart({ ownership: 'human_owned', suppressed: true })],
        envelope: { ...base, ownership: { state: 'human_owned', suppressed: true } },
        replies
      }
    }

    const active = state.routine !== undefined && !isTerminal(state.routine) ? state.routine : undefined
    const call = typedCallOf(message, requestActivated(requestContext))
    if (call !== undefined) {
      const result = engine.invoke(call.toolName, call.arguments, active)
      const note = result.errors?.join('; ')
      if (result.progress !== undefined) {
        state.routine = { ...result.progress, taskId: requestContext.taskId }
        return routinePlan(state.routine, base, note, result.invocation)
      }
      // unknown_tool, declined, not_started: nothing runs, the conversation's routine stays as it was.
      const envelope: ConverseEnvelope = { ...base, invocation: result.invocation }
      const declaration = result.declaration
      if (declaration === undefined) {
        return { kind: 'message', parts: [textPart(`There is no routine called "${call.toolName}".`)], envelope }
      }
      if (result.pendingInput !== undefined) {
        // not_started (only exposed routines can be called): `routine` says what a corrected call must supply.
        envelope.routine = { toolName: declaration.toolName, name: declaration.name, status: 'waiting_for_input', pendingInput: result.pendingInput }
      }
      return { kind: 'message', parts: [textPart(`${declaration.name}: ${note as string}`)], envelope }
    }

    if (active !== undefined) {
      const meaning = interpretRoutineMessage(parts, {
        slots: (engine.declaration(active.routine) as RoutineDeclaration).slots,
        pending: engine.pendingInput(active),
        awaitingApproval: active.status === 'waiting_for_approval'
      })
      let next: ConversationRoutine
      let note: string | undefined
      if (meaning.kind === 'cancel') {
        next = engine.abandon(active)
      } else if (meaning.kind === 'approval') {
        next = meaning.approved ? engine.approve(active) : engine.decline(active)
      } else {
        const filled = engine.fill(active, meaning.values)
        next = filled.progress
        if (filled.rejected.length > 0) note = filled.rejected.map((entry) => entry.reason).join('; ')
        else if (filled.accepted.length === 0) note = "I couldn't read a value from that."
      }
      state.routine = { ...next, taskId: requestContext.taskId }
      return routinePlan(state.routine, base, note)
    }

    const text = messageText(parts)
    const declaration = recognise(text)
    if (declaration !== undefined) {
      // Pairs in the opening sentence ("book a table, date=…") fill slots at once; plain text does not.
      const initial = parseSlotInput(parts, { slots: declaration.slots }).values
      const started = engine.start(declaration.name, initial)
      state.routine = { ...started.progress, taskId: requestContext.taskId }
      const note = started.rejected.length > 0 ? started.rejected.map((entry) => entry.reason).join('; ') : undefined
      return routinePlan(state.routine, base, note)
    }

    const answered = answerTurn(text, { knowledgeBase, requestMessageId: message.messageId, turnId })
    return { kind: 'message', parts: answered.parts, envelope: answered.envelope }
  }

  function replyOf (requestContext: RequestContext, parts: Part[], envelope: ConverseEnvelope, taskId?: string): Message {
    return agentMessage({ messageId: newId(), contextId: requestContext.contextId, taskId, parts, envelope })
  }

  /** A Message reply (new or repeated), as the client gets it. */
  function replyMessage (plan: Plan & { kind: 'message' }, requestContext: RequestContext): Message {
    const message = replyOf(requestContext, plan.parts, plan.envelope, requestContext.task?.id)
    message.referenceTaskIds = plan.references ?? []
    return message
  }

  /**
   * A replayed reply: the kept Message as it was; the task holding the first reply as it stands (an event without
   * history or artifacts: the SDK merges what is stored, so nothing older is written back), or, when the store no
   * longer keeps that task, a Message that names it.
   */
  async function publishReplay (plan: Plan & { kind: 'replay' }, requestContext: RequestContext, eventBus: ExecutionEventBus): Promise<void> {
    if (plan.message !== undefined) {
      eventBus.publish(AgentEvent.message(plan.message))
      return
    }
    const { taskId, turnId } = plan.task as { taskId: string, turnId: string }
    const task = await taskOfTurn(taskId, turnId, requestContext.context)
    if (task !== undefined) {
      eventBus.publish(AgentEvent.task({ ...task, history: [], artifacts: [] }))
      return
    }
    const messageId = requestContext.userMessage.messageId
    const gone: Plan & { kind: 'message' } = {
      kind: 'message',
      parts: [textPart(`Message ${messageId} was already received and answered in task ${taskId}, which is no longer kept.`)],
      envelope: envelopeBase(turnId, messageId),
      references: [taskId]
    }
    eventBus.publish(AgentEvent.message(replyMessage(gone, requestContext)))
  }

  function publish (plan: Exclude<Plan, { kind: 'replay' }>, requestContext: RequestContext, eventBus: ExecutionEventBus, reply?: Message): void {
    const { taskId, contextId } = requestContext
    if (plan.kind === 'message') {
      eventBus.publish(AgentEvent.message(reply ?? replyMessage(plan, requestContext)))
      return
    }
    const timestamp = new Date().toISOString()
    eventBus.publish(AgentEvent.task(turnTask(requestContext, timestamp)))
    for (const reply of plan.replies ?? []) {
      eventBus.publish(AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_WORKING, message: humanMessage(contextId, taskId, reply, newId), timestamp },
        metadata: undefined
      }))
    }
    if (plan.artifact !== undefined) {
      const artifact: Artifact = {
        artifactId: newId(),
        name: plan.artifact.name,
        description: '',
        parts: plan.artifact.parts,
        metadata: { [CONVERSE_EXTENSION_URI]: plan.envelope },
        extensions: [CONVERSE_EXTENSION_URI]
      }
      eventBus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact, append: false, lastChunk: true, metadata: undefined }))
    }
    eventBus.publish(AgentEvent.statusUpdate({
      taskId,
      contextId,
      status: { state: plan.state, message: replyOf(requestContext, plan.parts, plan.envelope, taskId), timestamp },
      metadata: undefined
    }))
  }

  async function runTurn (requestContext: RequestContext, eventBus: ExecutionEventBus): Promise<void> {
    const turnId = newId()
    const message = requestContext.userMessage
    let plan: Plan | undefined
    /** A new turn's Message reply: kept with the turn (a retry gets it again), then published. */
    let reply: Message | undefined
    // An authenticated caller's conversations are its own (see conversationKey).
    const callerId = callerIdOf(requestContext.context)
    const owner = callerKeyOf(requestContext.context)
    let reserved = !reservesTasks(taskStore)
    const update = async (): Promise<unknown> => await store.update(agentId, conversationKey(callerId, requestContext.contextId), (current) => {
      const state = current ?? newConversationState(agentId, conversationKey(callerId, requestContext.contextId))
      if (callerId !== undefined) state.caller = { id: callerId, contextId: requestContext.contextId }
      plan = decide(state, requestContext, turnId)
      reply = undefined
      // A turn that opens a task takes its slot under the caller's cap first (outside the update: a store's one
      // session may be held by it), then decides again; refused, nothing is written.
      if (plan.kind === 'task' && requestContext.task === undefined && !reserved) throw NEEDS_RESERVATION
      if (plan.kind === 'replay' || (plan.kind === 'message' && plan.repeat === true)) return state
      const at = new Date().toISOString()
      // A turn names its task only when its reply went into that task (a Message reply is in no task).
      const taskId = plan.kind === 'task' ? requestContext.taskId : undefined
      reply = plan.kind === 'message' ? replyMessage(plan, requestContext) : undefined
      state.turns.push({
        id: turnId,
        at,
        role: 'user',
        text: messageText(read(message)),
        taskId,
        messageId: message.messageId,
        content: messageContentDigest(message),
        reply: reply === undefined ? undefined : JSON.stringify(Message.toJSON(reply))
      })
      if (!plan.envelope.ownership?.suppressed) {
        // The envelope goes with the turn: the inbox's trace shows what the client was told.
        state.turns.push({ id: newId(), at, role: 'agent', text: messageText(toWireParts(plan.parts)), taskId, envelope: plan.envelope })
      }
      return state
    }, { owner })
    const trace = traceContextIn(requestContext.context.state)
    /** The update in its span; false: nothing written, the turn's task needs its slot first (not a failure). */
    const record = async (): Promise<boolean> => await inConversationSpan(store, 'update', agentId, requestContext.contextId, trace, async () => {
      try {
        await update()
        return true
      } catch (error) {
        if (error !== NEEDS_RESERVATION) throw error
        return false
      }
    })
    if (!await record()) {
      await (taskStore as TaskStore & TaskReservations).reserve(requestContext.taskId, requestContext.context)
      reserved = true
      await record()
    }
    // The task left open is closed before this turn answers: a client that has the answer sees it closed.
    await closeSuperseded(requestContext)
    if (plan?.kind === 'replay') await publishReplay(plan, requestContext, eventBus)
    else publish(plan as Exclude<Plan, { kind: 'replay' }>, requestContext, eventBus, reply)
  }

  return {
    engine,
    async execute (requestContext, eventBus) {
      try {
        await runTurn(requestContext, eventBus)
      } catch (error) {
        // The SDK words a rejected turn into the FAILED task the caller reads ("Agent execution error: <message>"):
        // a named error of ours says what the caller may know; anything else (a driver's refusal, a bug) stays in
        // the log the SDK writes, with this error's cause.
        throw error instanceof ConverseError ? error : new TurnFailedError(error)
      }
    },
    async replayOf (message, contextId, context) {
      const trace = traceContextIn(context.state)
      const state = contextId === ''
        ? undefined
        : await inConversationSpan(store, 'get', agentId, contextId, trace, async () => await store.get(agentId, conversationKey(callerIdOf(context), contextId)))
      if (state === undefined) {
        // A new conversation: refused here, before anything runs, when its caller is at the store's bound.
        const { admit } = store
        if (admit === undefined) return undefined
        await inConversationSpan(store, 'admit', agentId, contextId === '' ? undefined : contextId, trace, async () => { await admit.call(store, agentId, callerKeyOf(context)) })
        return undefined
      }
      const first = firstTurnOf(state, message.messageId)
      if (first === undefined) return undefined
      if (first.content !== undefined && first.content !== messageContentDigest(message)) return { kind: 'conflict' }
      if (first.reply !== undefined) return { kind: 'message', message: Message.fromJSON(JSON.parse(first.reply)) }
      if (first.taskId === undefined) return undefined
      // The first copy committed its turn; its task may still be being stored (here or on another instance).
      await taskOfTurn(first.taskId, first.id, context)
      return { kind: 'task', taskId: first.taskId }
    },
    async cancelTask (taskId, eventBus) {
      // CancelTask abandons the conversation's routine when that task carries it; the task always ends CANCELED
      // (the SDK waits for a terminal status on the bus).
      const key = await store.findContextByTaskId(agentId, taskId)
      let routine: ConversationRoutine | undefined
      let contextId: string | undefined
      if (key !== undefined) {
        await store.update(agentId, key, (current) => {
          const state = current as ConversationState
          contextId = clientContextId(state)
          routine = undefined
          if (state.routine !== undefined && state.routine.taskId === taskId && !isTerminal(state.routine)) {
            routine = { ...engine.abandon(state.routine), taskId }
            state.routine = routine
          }
          return state
        })
      }
      const envelope: ConverseEnvelope = {
        author: 'agent',
        answerCoverage: { availability: 'not_recorded' },
        ownership: { state: 'ai_owned', suppressed: false }
      }
      if (routine !== undefined) envelope.routine = engine.routineState(routine)
      const text = routine !== undefined ? engine.prompt(routine) : 'Task canceled.'
      eventBus.publish(AgentEvent.statusUpdate({
        taskId,
        // The conversation may no longer know the task (evicted); the SDK keeps the task's own contextId.
        contextId: contextId ?? '',
        status: {
          state: TaskState.TASK_STATE_CANCELED,
          message: agentMessage({ messageId: newId(), contextId: contextId ?? '', taskId, parts: [textPart(text)], envelope }),
          timestamp: new Date().toISOString()
        },
        metadata: undefined
      }))
    }
  }
}

/**
 * The task event a turn opens with. An existing task was loaded when the request came in; parallel requests may
 * have added to it since. Its event carries no history or artifacts, so the SDK merges what is persisted instead of
 * writing an old copy. A new task starts SUBMITTED with the user's message.
 */
export function turnTask (requestContext: Pick<RequestContext, 'taskId' | 'contextId' | 'task' | 'userMessage'>, timestamp: string): Task {
  const { taskId, contextId, task: existing } = requestContext
  return existing !== undefined
    ? { ...existing, history: [], artifacts: [] }
    : {
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp },
        artifacts: [],
        history: [requestContext.userMessage],
        metadata: undefined
      }
}
