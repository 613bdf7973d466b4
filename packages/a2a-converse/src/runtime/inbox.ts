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
import { StreamResponse, TaskState } from '@a2a-js/sdk'
import type { TaskStore } from '@a2a-js/sdk/server'
import type { TaskTurnLock } from '../stores/task-turn-lock.js'
import { inConversationSpan, type ConversationOperation } from '../stores/traced-conversations.js'
import type { Context } from '../telemetry/tracing.js'
import type { OwnershipState } from '../core/envelope.js'
import type { TaskEventHub, TaskEventListener } from '../events/task-event-hub.js'
import {
  clientContextId, type ConversationListOptions, type ConversationState, type ConversationStore, type HumanReply
} from '../stores/conversation-store.js'
import { lastTaskTurn } from './turn-plan.js'
import { agentMessage, humanMessage, textPart } from './agent-messages.js'
import type { RoutineEngine } from './routine-engine.js'
import { heldForPerson, heldTaskWriter } from './held-tasks.js'
import { addressReply, MOVED_RETRIES, REPLY_ATTEMPTS, type AddressedReply, type Addressing, type HeldTask } from './reply-addressing.js'
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
