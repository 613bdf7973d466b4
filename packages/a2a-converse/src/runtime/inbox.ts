/**
 * Human takeover: what the operator API does to a conversation. Ownership lives in the ConversationStore; a
 * person's reply becomes a ROLE_AGENT message with `author: human` in the task the conversation holds for a person
 * (the task of the last suppressed turn) — written to the TaskStore (GetTask shows it) and published on the
 * TaskEventHub (open streams receive it). A reply written while no task is held waits in the conversation's inbox
 * and goes into the task of the client's next turn.
 *
 * The conversation is changed first (ConversationStore.update, whose `fn` only computes the next state: a store may
 * call it twice or roll it back), the task written after that change committed — under the task's turn lock, so no
 * client turn on that task runs meanwhile, and only while the task still waits for a person. A reply whose task
 * ended in between (a client turn superseded it) is re-addressed: to the task the conversation holds now, else to
 * the inbox. Nothing a person wrote is lost or written twice.
 */
import { randomUUID } from 'node:crypto'
import { StreamResponse, TaskState, type Message, type Task } from '@a2a-js/sdk'
import type { TaskStore } from '@a2a-js/sdk/server'
import { createTaskWriter, type TaskWriter } from '../events/task-writer.js'
import { callerContext } from '../auth/sdk-user.js'
import { TaskBusyError, type TaskTurnLock, type TaskTurnRelease } from '../stores/task-turn-lock.js'
import { acquireTurn } from '../stores/traced-turn-lock.js'
import { inConversationSpan, type ConversationOperation } from '../stores/traced-conversations.js'
import { traceContextState, type Context } from '../telemetry/tracing.js'
import type { ConverseEnvelope, OwnershipState, RoutineState } from '../core/envelope.js'
import type { TaskEventHub, TaskEventListener } from '../events/task-event-hub.js'
import {
  clientContextId, needsPersonReasons, type ConversationCaller, type ConversationListOptions, type ConversationState, type ConversationStore,
  type ConversationSummary, type ConversationTurn, type HumanReply, type NeedsPersonReason, type TurnRole
} from '../stores/conversation-store.js'
import { lastTaskTurn } from './turn-plan.js'
import { agentMessage, humanMessage, textPart } from './agent-messages.js'
import type { RoutineEngine } from './routine-engine.js'

export interface ConversationView {
  agentId: string
  /** How the operator API addresses the conversation (for a caller's: see conversationKey). */
  contextId: string
  /** The authenticated caller the conversation belongs to, and its contextId as that caller knows it. */
  caller?: ConversationCaller
  ownership: OwnershipState
  routine?: RoutineState
  /** The most recent turns, oldest first. */
  turns: ConversationTurn[]
}

export interface HumanReplyResult {
  contextId: string
  /** The task the reply was added to; absent when no task waits for a person (the reply goes into the next one). */
  taskId?: string
  /** false: kept in the conversation's inbox until the client's next message. */
  delivered: boolean
  /** The reply as it travels on the wire (A2A 1.0 JSON). */
  message: Record<string, unknown>
}

/** A conversation in the inbox's list (and in its live events). */
export interface InboxEntry {
  contextId: string
  caller?: ConversationCaller
  ownership: OwnershipState
  /** ISO 8601: the last turn, reply, takeover or release. */
  lastActivityAt: string
  /** Why it waits for a person; empty when it does not. */
  needsPerson: NeedsPersonReason[]
  /** The last turn, its text cut short. */
  lastTurn?: { role: TurnRole, at: string, text: string }
  /** Grows with every change: of two entries for one conversation, the higher is the newer. */
  version: number
}

export interface InboxPage {
  conversations: InboxEntry[]
  /** Pass as `before` for the next page; absent on the last page. */
  next?: number
}

/** One turn of the trace: who wrote it and, for the agent's turns, the envelope the client received. */
export interface TraceTurn extends ConversationTurn {
  /** `agent` or `human` for the answering side; absent for the caller's turns. */
  author?: 'agent' | 'human'
  envelope?: ConverseEnvelope
}

export interface ConversationTrace {
  agentId: string
  contextId: string
  caller?: ConversationCaller
  ownership: OwnershipState
  ownershipChangedAt?: string
  lastActivityAt: string
  needsPerson: NeedsPersonReason[]
  routine?: RoutineState
  /** Every turn the store keeps (ConversationLimits.maxTurns), oldest first. */
  turns: TraceTurn[]
  version: number
}

/**
 * What the operator API does to an agent's conversations. Every method but `follow` takes the trace context of the
 * request it serves (`trace`, optional): the store calls, task loads and writes and turn lock waits it makes are then
 * spans under that request's (for the stores whose calls are spans: packages/a2a-converse/src/stores/traced-conversations.ts), and push
 * notifications its task writes send carry that trace.
 */
export interface Inbox {
  view (agentId: string, contextId: string, trace?: Context): Promise<ConversationView | undefined>
  /** A page of the agent's conversations, newest activity first. */
  list (agentId: string, options: Omit<ConversationListOptions, 'limit'> & { limit: number }, trace?: Context): Promise<InboxPage>
  /** The conversation's turns with the agent turns' envelopes; undefined: unknown conversation. */
  trace (agentId: string, contextId: string, trace?: Context): Promise<ConversationTrace | undefined>
  takeover (agentId: string, contextId: string, trace?: Context): Promise<ConversationView | undefined>
  release (agentId: string, contextId: string, trace?: Context): Promise<ConversationView | undefined>
  /** Follows the agent's conversation events (runtime/conversation-feed.ts); returns the unsubscribe function. */
  follow (agentId: string, listener: TaskEventListener): () => void
  /**
   * undefined: unknown conversation; 'not_human_owned': take it over first; 'inbox_full': no task waits for a
   * person and the conversation already keeps the most undelivered replies it can (the store's maxInbox) — the
   * reply is refused rather than accepted and dropped.
   */
  reply (agentId: string, contextId: string, text: string, trace?: Context): Promise<HumanReplyResult | 'not_human_owned' | 'inbox_full' | undefined>
}

export interface InboxOptions {
  store: ConversationStore
  /** The task store of every agent whose conversations it serves (the same one its A2A endpoint uses). */
  taskStores: ReadonlyMap<string, TaskStore>
  events: TaskEventHub
  /** Routine engines by agent id, to show the routine in the view (one its agent no longer declares is not shown). */
  engines?: ReadonlyMap<string, RoutineEngine>
  /**
   * The task turn lock of every agent (the one its A2A endpoint takes for turns that name a task): a person's reply
   * and a release's end of the held task wait for a client turn running on that task. Without one, they do not.
   */
  turnLocks?: ReadonlyMap<string, TaskTurnLock>
  recentTurns?: number
  newId?: () => string
}

/** A listing's summary as the inbox shows it. */
export function inboxEntry (
  summary: Pick<ConversationSummary, 'contextId' | 'caller' | 'ownership' | 'updatedAt' | 'needsPerson' | 'lastTurn' | 'version'>
): InboxEntry {
  const entry: InboxEntry = {
    contextId: summary.contextId,
    ownership: summary.ownership,
    lastActivityAt: summary.updatedAt,
    needsPerson: summary.needsPerson,
    version: summary.version
  }
  if (summary.caller !== undefined) entry.caller = summary.caller
  if (summary.lastTurn !== undefined) entry.lastTurn = summary.lastTurn
  return entry
}

export function createInbox (options: InboxOptions): Inbox {
  const { store, taskStores, events } = options
  // One writer per task store, made on first use (an agent served from a later change brings a store of its own).
  const writers = new WeakMap<TaskStore, TaskWriter>()
  const writerOf = (taskStore: TaskStore): TaskWriter => {
    let writer = writers.get(taskStore)
    if (writer === undefined) writers.set(taskStore, writer = createTaskWriter(taskStore, events))
    return writer
  }
  const newId = options.newId ?? randomUUID
  const recent = options.recentTurns ?? 20

  /**
   * One call of the store, a span under `trace` where the store's calls are. Its key, not the client's contextId:
   * no context id attribute (the key holds the caller's id for a signed-in caller).
   */
  const inStore = <T>(operation: ConversationOperation, agentId: string, trace: Context | undefined, work: () => Promise<T>): Promise<T> =>
    inConversationSpan(store, operation, agentId, undefined, trace, work)

  function toView (state: ConversationState): ConversationView {
    const view: ConversationView = {
      agentId: state.agentId,
      contextId: state.contextId,
      ownership: state.ownership,
      turns: state.turns.slice(-recent)
    }
    if (state.caller !== undefined) view.caller = state.caller
    const engine = options.engines?.get(state.agentId)
    if (state.routine !== undefined && engine?.declaration(state.routine.routine) !== undefined) view.routine = engine.routineState(state.routine)
    return view
  }

  /** The task the conversation holds for a person: its last task, while that task is WORKING. */
  async function heldTask (agentId: string, state: ConversationState, trace: Context | undefined): Promise<string | undefined> {
    const taskId = lastTaskTurn(state)?.taskId
    if (taskId === undefined) return undefined
    // The task is in its caller's scope (a walk-in's without a caller).
    const task = await (taskStores.get(agentId) as TaskStore).load(taskId, callerContext(state.caller?.id, traceContextState(trace)))
    return task?.status?.state === TaskState.TASK_STATE_WORKING ? taskId : undefined
  }

  /**
   * Writes a status to a task of the conversation after the conversation's change committed, under the task's turn
   * lock (a client turn on the task runs before or after, never meanwhile), if the task is still in the state the
   * change was decided on (`waiting`); through the task writer: stored, then published to open streams on every
   * instance. `landed`: the task holds the message; `ended`: the task ended in between (nothing stored; a write that
   * lost the race to the end by a hair was published to streams that end had already closed); `busy`: a client turn
   * held the task past the lock's wait bound (nothing written).
   */
  async function writeTask (
    conversation: ConversationState, taskId: string, state: TaskState, message: Message, waiting: (task: Task) => boolean,
    trace: Context | undefined
  ): Promise<'landed' | 'ended' | 'busy'> {
    const agentId = conversation.agentId
    const context = callerContext(conversation.caller?.id, traceContextState(trace))
    const lock = options.turnLocks?.get(agentId)
    let release: TaskTurnRelease | undefined
    try {
      release = lock === undefined ? undefined : await acquireTurn(lock, context, taskId)
    } catch (error) {
      if (error instanceof TaskBusyError) return 'busy'
      throw error
    }
    try {
      const taskStore = taskStores.get(agentId) as TaskStore
      const task = await taskStore.load(taskId, context)
      if (task === undefined || !waiting(task)) return 'ended'
      const status = { state, message, timestamp: new Date().toISOString() }
      await writerOf(taskStore).write({ taskId, contextId: clientContextId(conversation), status, metadata: undefined }, context)
      // A write that lost to a task's end (a superseding turn's close, which takes no turn lock) is refused by the
      // store: what it holds now says whether this one landed.
      return (await taskStore.load(taskId, context))?.status?.message?.messageId === message.messageId ? 'landed' : 'ended'
    } finally {
      await release?.()
    }
  }

  async function setOwnership (agentId: string, contextId: string, ownership: OwnershipState, trace: Context | undefined) {
    if (!await inStore('exists', agentId, trace, async () => await store.exists(agentId, contextId))) return undefined
    let held: string | undefined
    let state: ConversationState
    for (let tries = 0; ; tries++) {
      // The held task is looked up before the update, as a reply's is (see reply): a task load inside the update
      // would wait for the update's own session on the embedded database.
      const seen = ownership === 'ai_owned' ? await inStore('get', agentId, trace, async () => await store.get(agentId, contextId)) : undefined
      const lastTaskId = seen === undefined ? undefined : lastTaskTurn(seen)?.taskId
      const heldThen = seen === undefined ? undefined : await heldTask(agentId, seen, trace)
      let moved = false
      state = await inStore('update', agentId, trace, async () => await store.update(agentId, contextId, (current) => {
        held = undefined
        const next = current as ConversationState
        if (next.ownership === ownership) return next
        moved = ownership === 'ai_owned' && lastTaskTurn(next)?.taskId !== lastTaskId
        if (moved && tries < MOVED_RETRIES) return next
        next.ownership = ownership
        next.ownershipChangedAt = new Date().toISOString()
        if (ownership === 'ai_owned') {
          // Replies nobody received stay in the turns (the view shows them); the agent answers from now on.
          next.inbox = []
          // A turn that kept moving the conversation on: its task is its own to end.
          held = moved ? undefined : heldThen
        }
        return next
      }))
      if (!moved || tries >= MOVED_RETRIES) break
    }
    if (held !== undefined) {
      // Release ends the task that held the person's side, so its streams close and the client's next message
      // starts a fresh task with the agent — unless a client turn got to that task first (it answered it).
      const message = agentMessage({
        messageId: newId(),
        contextId: clientContextId(state),
        taskId: held,
        parts: [textPart('The conversation is back with the assistant.')],
        envelope: {
          author: 'agent',
          answerCoverage: { availability: 'not_recorded' },
          ownership: { state: 'ai_owned', suppressed: false }
        }
      })
      await writeTask(state, held, TaskState.TASK_STATE_COMPLETED, message, heldForPerson, trace)
    }
    return toView(state)
  }

  /**
   * One attempt at addressing a reply (see addressReply), looking the held task up again while a client turn keeps
   * giving the conversation a newer one (at most MOVED_RETRIES times, then the inbox). The held task is looked up
   * before the conversation's update, not inside it: the update holds the conversation's row while it runs (on the
   * embedded database, its only session), so a task load there would wait for the update itself.
   */
  async function address (agentId: string, contextId: string, reply: HumanReply, attempt: number, trace: Context | undefined): Promise<{ addressing: Addressing, state: ConversationState }> {
    for (let tries = 0; ; tries++) {
      // (It exists: checked by reply. One deleted meanwhile fails here as the update itself would.)
      const seen = await inStore('get', agentId, trace, async () => await store.get(agentId, contextId)) as ConversationState
      const held: HeldTask = { lastTaskId: lastTaskTurn(seen)?.taskId, taskId: attempt < REPLY_ATTEMPTS - 1 ? await heldTask(agentId, seen, trace) : undefined }
      let addressed: AddressedReply | undefined
      const written = await inStore('update', agentId, trace, async () => await store.update(agentId, contextId, (current) => {
        addressed = addressReply(current as ConversationState, reply, attempt, held, tries === MOVED_RETRIES, store.limits.maxInbox)
        return addressed.next
      }))
      const { addressing } = addressed as AddressedReply
      // Nothing written (not human-owned, moved, a new reply refused): the conversation as it was read.
      if (addressing.result !== 'moved') return { addressing, state: written ?? seen }
    }
  }

  function toTrace (state: ConversationState): ConversationTrace {
    const trace: ConversationTrace = {
      agentId: state.agentId,
      contextId: state.contextId,
      ownership: state.ownership,
      lastActivityAt: state.updatedAt,
      needsPerson: needsPersonReasons(state),
      turns: state.turns.map((turn) => turn.role === 'user' ? turn : { ...turn, author: turn.role }),
      version: state.version
    }
    if (state.caller !== undefined) trace.caller = state.caller
    if (state.ownershipChangedAt !== undefined) trace.ownershipChangedAt = state.ownershipChangedAt
    const engine = options.engines?.get(state.agentId)
    if (state.routine !== undefined && engine?.declaration(state.routine.routine) !== undefined) trace.routine = engine.routineState(state.routine)
    return trace
  }

  return {
    async view (agentId, contextId, trace) {
      const state = await inStore('get', agentId, trace, async () => await store.get(agentId, contextId))
      return state === undefined ? undefined : toView(state)
    },
    async list (agentId, listOptions, trace) {
      // One more than asked: whether a next page exists, without a count.
      const summaries = await inStore('list', agentId, trace, async () => await store.list(agentId, { ...listOptions, limit: listOptions.limit + 1 }))
      const page = summaries.slice(0, listOptions.limit)
      const result: InboxPage = { conversations: page.map(inboxEntry) }
      if (summaries.length > listOptions.limit) result.next = page[page.length - 1].position
      return result
    },
    async trace (agentId, contextId, trace) {
      const state = await inStore('get', agentId, trace, async () => await store.get(agentId, contextId))
      return state === undefined ? undefined : toTrace(state)
    },
    follow: (agentId, listener) => events.subscribeConversations(agentId, listener),
    takeover: (agentId, contextId, trace) => setOwnership(agentId, contextId, 'human_owned', trace),
    release: (agentId, contextId, trace) => setOwnership(agentId, contextId, 'ai_owned', trace),
    async reply (agentId, contextId, text, trace) {
      if (!await inStore('exists', agentId, trace, async () => await store.exists(agentId, contextId))) return undefined
      const reply = { id: newId(), at: new Date().toISOString(), text }
      let result: HumanReplyResult | undefined
      // Ends by the last attempt at the latest: it never addresses a task (see addressReply).
      for (let attempt = 0; ; attempt++) {
        const { addressing, state } = await address(agentId, contextId, reply, attempt, trace)
        if (addressing.result === 'not_human_owned' || addressing.result === 'inbox_full') {
          // A reply already recorded (later attempts) was released with the conversation: it stays in the turns.
          return result === undefined ? addressing.result : { ...result, delivered: false }
        }
        const taskId = addressing.taskId
        const message = humanMessage(clientContextId(state), taskId, reply, newId)
        const wire = StreamResponse.toJSON({ payload: { $case: 'message', value: message } }) as { message: Record<string, unknown> }
        result = { contextId, ...(taskId !== undefined ? { taskId } : {}), delivered: taskId !== undefined, message: wire.message }
        if (taskId === undefined || addressing.result === 'kept') return { ...result, delivered: false }
        const written = await writeTask(state, taskId, TaskState.TASK_STATE_WORKING, message, heldForPerson, trace)
        if (written === 'landed') return result
        // A task a client turn keeps busy will be so again: straight to the inbox (the last attempt).
        if (written === 'busy') attempt = REPLY_ATTEMPTS - 2
      }
      /* c8 ignore next -- the end of the loop is never reached: the last attempt returns (it never addresses a task) */
    }
  }
}

/** The task a reply would go to, as looked up before the conversation's update (addressReply). */
export interface HeldTask {
  /** The conversation's last task when it was read. */
  lastTaskId: string | undefined
  /** That task, if it waits for a person. */
  taskId: string | undefined
}

/** Where a reply was addressed: what the update decided and, when recorded for a task, that task. */
export interface Addressing {
  result: 'recorded' | 'not_human_owned' | 'inbox_full' | 'kept' | 'moved'
  taskId?: string
}

/** A reply addressed: where, and the conversation to store (undefined: nothing to write). */
interface AddressedReply { addressing: Addressing, next?: ConversationState }

/**
 * Records a person's reply (attempt 0) or re-addresses it (later attempts, after its task ended before the reply
 * reached it): to the task the conversation holds for a person, else — and on the last attempt always — to the
 * inbox (at most `maxInbox` replies). Computes only: `state` is the update's private copy.
 */
export function addressReply (state: ConversationState, reply: HumanReply, attempt: number, held: HeldTask, final: boolean, maxInbox: number): AddressedReply {
  if (state.ownership !== 'human_owned') return { addressing: { result: 'not_human_owned' } }
  // The held task was looked up for the conversation as it was read before this update; a turn in between that
  // gave it a newer task makes that lookup stale: look again (at most MOVED_RETRIES times, then the inbox).
  const moved = held.lastTaskId !== lastTaskTurn(state)?.taskId
  if (moved && !final) return { addressing: { result: 'moved' } }
  const taskId = attempt < REPLY_ATTEMPTS - 1 && !moved ? held.taskId : undefined
  const recorded = attempt === 0 ? undefined : state.turns.find((turn) => turn.role === 'human' && turn.id === reply.id)
  if (taskId === undefined && state.inbox.length >= maxInbox) {
    // A new reply is refused; one already recorded stays in the turns, undelivered (it names no task).
    const addressing: Addressing = { result: attempt === 0 ? 'inbox_full' : 'kept' }
    if (recorded === undefined) return { addressing }
    recorded.taskId = undefined
    return { addressing, next: state }
  }
  if (recorded === undefined) state.turns.push({ ...reply, role: 'human', taskId })
  else recorded.taskId = taskId
  if (taskId === undefined) state.inbox.push(reply)
  return { addressing: { result: 'recorded', taskId }, next: state }
}

/** How often a reply looks its held task up again when a turn gave the conversation a newer task meanwhile. */
const MOVED_RETRIES = 3

/**
 * How many times a reply is addressed: to the held task, again to the task held after that one ended in between,
 * then to the inbox.
 */
const REPLY_ATTEMPTS = 3

/** A task still waiting for a person: WORKING (the held task's state; a client turn on it moves it on). */
function heldForPerson (task: Task): boolean {
  return task.status?.state === TaskState.TASK_STATE_WORKING
}
