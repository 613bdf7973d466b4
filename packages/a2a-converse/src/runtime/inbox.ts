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
import type { TaskStore } from '@a2a-js/sdk/server'
import type { TaskTurnLock } from '../stores/task-turn-lock.js'
import { inConversationSpan, type ConversationOperation } from '../stores/traced-conversations.js'
import type { Context } from '../telemetry/tracing.js'
import type { OwnershipState } from '../core/envelope.js'
import type { TaskEventHub, TaskEventListener } from '../events/task-event-hub.js'
import type { ConversationListOptions, ConversationState, ConversationStore } from '../stores/conversation-store.js'
import type { RoutineEngine } from './routine-engine.js'
import { heldTaskWriter, type HeldTaskWriter } from './held-tasks.js'
import { setOwnership } from './inbox-ownership.js'
import { replyAsPerson } from './inbox-replies.js'
import { conversationTrace, conversationView, inboxEntry, type ConversationTrace, type ConversationView, type InboxPage } from './inbox-views.js'

export type { ConversationTrace, ConversationView, InboxEntry, InboxPage, TraceTurn } from './inbox-views.js'

export interface HumanReplyResult {
  contextId: string
  /** The task the reply was added to; absent when no task waits for a person (the reply goes into the next one). */
  taskId?: string
  /** false: kept in the conversation's inbox until the client's next message. */
  delivered: boolean
  /** The reply as it travels on the wire (A2A 1.0 JSON). */
  message: Record<string, unknown>
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

/** What takeover, release and a person's reply share (given by createInbox). */
export interface InboxWiring extends Pick<HeldTaskWriter, 'heldTask' | 'writeTask'> {
  store: ConversationStore
  /** One call of the store, a span under `trace` where the store's calls are. */
  inStore: <T>(operation: ConversationOperation, agentId: string, trace: Context | undefined, work: () => Promise<T>) => Promise<T>
  newId: () => string
}

export function createInbox (options: InboxOptions): Inbox {
  const { store, taskStores, events } = options
  const { heldTask, writeTask } = heldTaskWriter(taskStores, events, options.turnLocks)
  const toView = (state: ConversationState): ConversationView => conversationView(state, recent, options.engines?.get(state.agentId))
  const newId = options.newId ?? randomUUID
  const recent = options.recentTurns ?? 20

  /**
   * One call of the store, a span under `trace` where the store's calls are. Its key, not the client's contextId:
   * no context id attribute (the key holds the caller's id for a signed-in caller).
   */
  const inStore = <T>(operation: ConversationOperation, agentId: string, trace: Context | undefined, work: () => Promise<T>): Promise<T> =>
    inConversationSpan(store, operation, agentId, undefined, trace, work)
  const wiring: InboxWiring = { store, inStore, heldTask, writeTask, newId }

  /** Takeover or release (inbox-ownership.ts), as the conversation's view. */
  async function owned (agentId: string, contextId: string, ownership: OwnershipState, trace: Context | undefined): Promise<ConversationView | undefined> {
    const state = await setOwnership(wiring, agentId, contextId, ownership, trace)
    return state === undefined ? undefined : toView(state)
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
      return state === undefined ? undefined : conversationTrace(state, options.engines?.get(state.agentId))
    },
    follow: (agentId, listener) => events.subscribeConversations(agentId, listener),
    takeover: async (agentId, contextId, trace) => await owned(agentId, contextId, 'human_owned', trace),
    release: async (agentId, contextId, trace) => await owned(agentId, contextId, 'ai_owned', trace),
    reply: async (agentId, contextId, text, trace) => await replyAsPerson(wiring, agentId, contextId, text, trace)
  }
}
