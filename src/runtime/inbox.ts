/**
 * Human takeover: what the operator API does to a conversation. Ownership lives in the ConversationStore; a
 * person's reply becomes a ROLE_AGENT message with `author: human` in the task the conversation holds for a person
 * (the task of the last suppressed turn) — written to the TaskStore (GetTask shows it) and published on the
 * TaskEventHub (open streams receive it). A reply written while no task is held waits in the conversation's inbox
 * and goes into the task of the client's next turn.
 */
import { randomUUID } from 'node:crypto'
import { Role, StreamResponse, TaskState, type Message } from '@a2a-js/sdk'
import type { TaskStore } from '@a2a-js/sdk/server'
import { createTaskWriter, type TaskWriter } from '../a2a/task-writer.js'
import { callerContext } from '../auth/sdk-user.js'
import type { ConverseEnvelope, OwnershipState, RoutineState } from '../core/envelope.js'
import { CONVERSE_EXTENSION_URI } from '../core/uri.js'
import type { TaskEventHub, TaskEventListener } from '../events/task-event-hub.js'
import {
  clientContextId, needsPersonReasons, type ConversationCaller, type ConversationListOptions, type ConversationState, type ConversationStore,
  type ConversationSummary, type ConversationTurn, type NeedsPersonReason, type TurnRole
} from '../stores/conversation-store.js'
import { humanMessage, lastTaskTurn } from './conversation-executor.js'
import { textPart } from './knowledge-executor.js'
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

export interface Inbox {
  view (agentId: string, contextId: string): Promise<ConversationView | undefined>
  /** A page of the agent's conversations, newest activity first. */
  list (agentId: string, options: Omit<ConversationListOptions, 'limit'> & { limit: number }): Promise<InboxPage>
  /** The conversation's turns with the agent turns' envelopes; undefined: unknown conversation. */
  trace (agentId: string, contextId: string): Promise<ConversationTrace | undefined>
  takeover (agentId: string, contextId: string): Promise<ConversationView | undefined>
  release (agentId: string, contextId: string): Promise<ConversationView | undefined>
  /** Follows the agent's conversation events (runtime/conversation-feed.ts); returns the unsubscribe function. */
  follow (agentId: string, listener: TaskEventListener): () => void
  /**
   * undefined: unknown conversation; 'not_human_owned': take it over first; 'inbox_full': no task waits for a
   * person and the conversation already keeps the most undelivered replies it can (the store's maxInbox) — the
   * reply is refused rather than accepted and dropped.
   */
  reply (agentId: string, contextId: string, text: string): Promise<HumanReplyResult | 'not_human_owned' | 'inbox_full' | undefined>
}

export interface InboxOptions {
  store: ConversationStore
  /** The task store of every agent whose conversations it serves (the same one its A2A endpoint uses). */
  taskStores: ReadonlyMap<string, TaskStore>
  events: TaskEventHub
  /** Routine engines by agent id, to show the routine in the view. */
  engines?: ReadonlyMap<string, RoutineEngine>
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
  const writers = new Map([...taskStores].map(([agentId, taskStore]) => [agentId, createTaskWriter(taskStore, events)]))
  const newId = options.newId ?? randomUUID
  const recent = options.recentTurns ?? 20

  function toView (state: ConversationState): ConversationView {
    const view: ConversationView = {
      agentId: state.agentId,
      contextId: state.contextId,
      ownership: state.ownership,
      turns: state.turns.slice(-recent)
    }
    if (state.caller !== undefined) view.caller = state.caller
    const engine = options.engines?.get(state.agentId)
    if (state.routine !== undefined && engine !== undefined) view.routine = engine.routineState(state.routine)
    return view
  }

  /** The task the conversation holds for a person: its last task, while that task is WORKING. */
  async function heldTask (agentId: string, state: ConversationState): Promise<string | undefined> {
    const taskId = lastTaskTurn(state)?.taskId
    if (taskId === undefined) return undefined
    // The task is in its caller's scope (a walk-in's without a caller).
    const task = await (taskStores.get(agentId) as TaskStore).load(taskId, callerContext(state.caller?.id))
    return task?.status?.state === TaskState.TASK_STATE_WORKING ? taskId : undefined
  }

  /**
   * Sets the held task's status (and appends the message to its history) through the task writer: stored (a task
   * already over stays over), then published to open streams on every instance.
   */
  async function updateTask (conversation: ConversationState, taskId: string, state: TaskState, message: Message): Promise<void> {
    const status = { state, message, timestamp: new Date().toISOString() }
    await (writers.get(conversation.agentId) as TaskWriter).write(
      { taskId, contextId: clientContextId(conversation), status, metadata: undefined }, callerContext(conversation.caller?.id))
  }

  async function setOwnership (agentId: string, contextId: string, ownership: OwnershipState) {
    if (!await store.exists(agentId, contextId)) return undefined
    // Under the conversation's lock: a client turn cannot slip in between the change and the held task's end.
    const state = await store.update(agentId, contextId, async (current) => {
      const next = current as ConversationState
      if (next.ownership === ownership) return next
      next.ownership = ownership
      next.ownershipChangedAt = new Date().toISOString()
      if (ownership === 'ai_owned') {
        // Replies nobody received stay in the turns (the view shows them); the agent answers from now on.
        next.inbox = []
        // Release ends the task that held the person's side, so its streams close and the client's next message
        // starts a fresh task with the agent.
        const held = await heldTask(agentId, next)
        if (held !== undefined) {
          const message: Message = {
            messageId: newId(),
            contextId: clientContextId(next),
            taskId: held,
            role: Role.ROLE_AGENT,
            parts: [textPart('The conversation is back with the assistant.')],
            metadata: {
              [CONVERSE_EXTENSION_URI]: {
                author: 'agent',
                answerCoverage: { availability: 'not_recorded' },
                ownership: { state: 'ai_owned', suppressed: false }
              }
            },
            extensions: [CONVERSE_EXTENSION_URI],
            referenceTaskIds: []
          }
          await updateTask(next, held, TaskState.TASK_STATE_COMPLETED, message)
        }
      }
      return next
    })
    return toView(state)
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
    if (state.routine !== undefined && engine !== undefined) trace.routine = engine.routineState(state.routine)
    return trace
  }

  return {
    async view (agentId, contextId) {
      const state = await store.get(agentId, contextId)
      return state === undefined ? undefined : toView(state)
    },
    async list (agentId, listOptions) {
      // One more than asked: whether a next page exists, without a count.
      const summaries = await store.list(agentId, { ...listOptions, limit: listOptions.limit + 1 })
      const page = summaries.slice(0, listOptions.limit)
      const result: InboxPage = { conversations: page.map(inboxEntry) }
      if (summaries.length > listOptions.limit) result.next = page[page.length - 1].position
      return result
    },
    async trace (agentId, contextId) {
      const state = await store.get(agentId, contextId)
      return state === undefined ? undefined : toTrace(state)
    },
    follow: (agentId, listener) => events.subscribeConversations(agentId, listener),
    takeover: (agentId, contextId) => setOwnership(agentId, contextId, 'human_owned'),
    release: (agentId, contextId) => setOwnership(agentId, contextId, 'ai_owned'),
    async reply (agentId, contextId, text) {
      if (!await store.exists(agentId, contextId)) return undefined
      let result: HumanReplyResult | 'not_human_owned' | 'inbox_full' = 'not_human_owned'
      // Delivered under the conversation's lock, so a client turn that moves the conversation to a new task
      // comes strictly before or after it.
      await store.update(agentId, contextId, async (current) => {
        const state = current as ConversationState
        result = 'not_human_owned'
        if (state.ownership !== 'human_owned') return state
        const reply = { id: newId(), at: new Date().toISOString(), text }
        const taskId = await heldTask(agentId, state)
        if (taskId === undefined && state.inbox.length >= store.limits.maxInbox) {
          result = 'inbox_full'
          return state
        }
        state.turns.push({ ...reply, role: 'human', taskId })
        const message = humanMessage(clientContextId(state), taskId, reply, newId)
        if (taskId !== undefined) await updateTask(state, taskId, TaskState.TASK_STATE_WORKING, message)
        else state.inbox.push(reply)
        const wire = StreamResponse.toJSON({ payload: { $case: 'message', value: message } }) as { message: Record<string, unknown> }
        result = { contextId, ...(taskId !== undefined ? { taskId } : {}), delivered: taskId !== undefined, message: wire.message }
        return state
      })
      return result
    }
  }
}
