/**
 * A conversation store's writes left to a request's deferred task saves (postgres-conversation-store.ts,
 * `joinsTaskSaves`; deferred-task-saves.ts): which kept states were handed out (a state handed back unchanged was
 * written by nobody since, when this process alone writes), which conversations wait in a request's saves, and the
 * joined write itself — it holds the conversation's lock in this process until it is written, found moved or given
 * up.
 */
import type { ServerCallContext } from '@a2a-js/sdk/server'
import type { ConversationState } from '../conversation-store.js'
import { joinDeferredSaves, type DeferredSavesCall, type JoinedOutcome } from '../deferred-task-saves.js'
import type { RememberedConversations } from './remembered-conversations.js'

/**
 * A joined write's statement: with the request's deferred saves, or alone when there are none; an insert's with the
 * new task's pending reservation ahead of it.
 */
export type JoinedRun = (saves: DeferredSavesCall | undefined, reservation?: DeferredSavesCall) => Promise<JoinedOutcome>

export class JoinedConversationWrites {
  /** The JSON each kept state handed out was parsed from: still kept, it is unchanged since. */
  readonly #handedOut = new WeakMap<ConversationState, string>()
  /** The conversations whose write waits in a request's deferred saves, and that request. */
  readonly #waiting = new Map<string, ServerCallContext>()
  readonly #remembered: RememberedConversations

  constructor (remembered: RememberedConversations) {
    this.#remembered = remembered
  }

  /** `state`, parsed from the kept `json`, handed out (`get(…, { recent: true })`). */
  handedOut (state: ConversationState, json: string): void {
    this.#handedOut.set(state, json)
  }

  /** Whether `read` is a kept state handed out and still the one kept: nobody wrote the conversation since. */
  unchanged (key: string, read: ConversationState): boolean {
    return this.#handedOut.get(read) === this.#remembered.recent(key)
  }

  /** Refuses at once an update by the request whose write of the conversation waits: it would wait for itself. */
  assertNotWaiting (key: string, contextId: string, context: ServerCallContext | undefined): void {
    if (context === undefined || this.#waiting.get(key) !== context) return
    throw new Error(`conversation ${contextId} is updated again by the request whose write waits for its task saves`)
  }

  /**
   * Leaves the write (`run`; `json` the state it writes) to the request's deferred saves, if it defers a task's
   * (joinDeferredSaves); true: `release` (the conversation's lock) is called once it was written, found moved or
   * given up. `takesReservation`: `run` makes the new task's pending reservation first (an insert). A statement that
   * throws keeps the lock (the task store may run it again, a push config re-sealed first); `abandon` then releases it.
   */
  join (context: ServerCallContext, key: string, json: string, release: () => void, run: JoinedRun, takesReservation: boolean): boolean {
    return joinDeferredSaves(context, () => {
      this.#waiting.set(key, context)
      let settle!: (written: boolean) => void
      const written = new Promise<boolean>((resolve) => { settle = resolve })
      const done = (outcome: boolean): void => {
        if (this.#waiting.get(key) === context) this.#waiting.delete(key)
        release()
        settle(outcome)
      }
      return {
        written,
        takesReservation,
        write: async (saves, reservation) => {
          const outcome = await run(saves, reservation)
          if (outcome.written) this.#remembered.remember(key, json)
          done(outcome.written)
          return outcome
        },
        abandon: () => { done(false) }
      }
    })
  }
}
