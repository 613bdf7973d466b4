/**
 * The inbox's live feed: a ConversationStore that, after each committed change, publishes the conversation's new
 * list entry on the task event hub's agent-level channel (on every instance, for a PostgreSQL hub). Whatever
 * changed the conversation — a client's turn, a takeover, a person's reply — the wrapper sees it, so none of those
 * paths needs to know about the inbox. A write the store left to the request's task saves (a routine step on the
 * embedded database) is published once they are written; a routine turn's write of its own, once the request's
 * deferred task saves are written or failed, so that on a server its NOTIFY and theirs go in one statement.
 *
 * Events (wire JSON): `{ "conversation": InboxEntry }` after an update, `{ "removed": { "contextId" } }` after a
 * delete. They are sent without waiting (a turn's answer does not wait for the inbox) and may arrive out of order
 * across instances: of two entries for one conversation the higher `version` is the newer. A publish that fails
 * (the database unreachable) is logged and dropped: the store's write stands, and the list is right on the next
 * read.
 */
import type { TaskEventHub } from '../events/task-event-hub.js'
import {
  conversationSummary, type ConversationGetOptions, type ConversationListOptions, type ConversationState, type ConversationStore,
  type ConversationSummary, type ConversationUpdate, type ConversationUpdateOptions
} from '../stores/conversation-store.js'
import { inboxEntry } from './inbox-views.js'
import { afterDeferredSaves, joinedWriteOf } from '../stores/deferred-task-saves.js'

export interface ConversationFeedLogger {
  warn (object: Record<string, unknown>, message: string): void
}

export class ConversationFeedStore implements ConversationStore {
  readonly #store: ConversationStore
  readonly #events: Pick<TaskEventHub, 'publishConversation'>
  readonly #logger: ConversationFeedLogger
  /** The wrapped store's `admit`, when it has one. */
  readonly admit?: (agentId: string, owner: string) => Promise<void>

  constructor (store: ConversationStore, events: Pick<TaskEventHub, 'publishConversation'>, logger: ConversationFeedLogger) {
    this.#store = store
    this.#events = events
    this.#logger = logger
    // Only when the wrapped store has one: a store that refuses in its write is asked nothing before a turn.
    const admit = store.admit
    if (admit !== undefined) this.admit = async (agentId, owner) => { await admit.call(store, agentId, owner) }
  }

  /** The wrapped store's limits. */
  get limits (): ConversationStore['limits'] {
    return this.#store.limits
  }

  /** Whether the wrapped store's calls are traced. */
  get traced (): boolean | undefined {
    return this.#store.traced
  }

  /** Whether the wrapped store joins a turn's write to its task saves. */
  get joinsTaskSaves (): boolean | undefined {
    return this.#store.joinsTaskSaves
  }

  /** The wrapped store's answer log, if it keeps one. */
  get answers (): ConversationStore['answers'] {
    return this.#store.answers
  }

  async get (agentId: string, contextId: string, options?: ConversationGetOptions): Promise<ConversationState | undefined> {
    return await this.#store.get(agentId, contextId, options)
  }

  async exists (agentId: string, contextId: string): Promise<boolean> {
    return await this.#store.exists(agentId, contextId)
  }

  async list (agentId: string, options?: ConversationListOptions): Promise<ConversationSummary[]> {
    return await this.#store.list(agentId, options)
  }

  async findContextByTaskId (agentId: string, taskId: string): Promise<string | undefined> {
    return await this.#store.findContextByTaskId(agentId, taskId)
  }

  async update<R extends ConversationState | undefined = ConversationState> (agentId: string, contextId: string, fn: ConversationUpdate<R>, options?: ConversationUpdateOptions): Promise<R | ConversationState> {
    const joinedBefore = options?.context === undefined ? undefined : joinedWriteOf(options.context)
    const state = await this.#store.update(agentId, contextId, fn, options)
    if (state === undefined) return state
    // The position is the store's business (listings); a live entry replaces the one with the same contextId.
    const event = { conversation: inboxEntry(conversationSummary(state, 0)) }
    const joined = options?.context === undefined ? undefined : joinedWriteOf(options.context)
    // A write left to the request's task saves (deferred-task-saves.ts) is published once it is stored, if it is; a
    // write of its own, once those saves are written or failed (its NOTIFY then goes with theirs), or at once.
    const context = options?.context
    if (joined !== undefined && joined !== joinedBefore) joined.written.then((written) => { if (written) this.#publish(agentId, event) }, () => {})
    else if (context === undefined || !afterDeferredSaves(context, () => { this.#publish(agentId, event) })) this.#publish(agentId, event)
    return state
  }

  async delete (agentId: string, contextId: string): Promise<boolean> {
    const deleted = await this.#store.delete(agentId, contextId)
    if (deleted) this.#publish(agentId, { removed: { contextId } })
    return deleted
  }

  async close (): Promise<void> {
    await this.#store.close()
  }

  #publish (agentId: string, event: Record<string, unknown>): void {
    this.#events.publishConversation(agentId, event).catch((error: unknown) => {
      this.#logger.warn({ err: error, agentId }, 'inbox feed: a conversation event was not published')
    })
  }
}
