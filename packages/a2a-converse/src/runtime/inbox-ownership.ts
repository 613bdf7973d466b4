/**
 * Takeover and release: a conversation's ownership changed in the store, and on release the task held for the
 * person ended (COMPLETED, "back with the assistant") so its streams close, unless a client turn moved the
 * conversation on meanwhile (its task is then its own to end).
 */
import { TaskState } from '@a2a-js/sdk'
import type { OwnershipState } from '../core/envelope.js'
import { clientContextId, type ConversationState } from '../stores/conversation-store.js'
import type { Context } from '../telemetry/tracing.js'
import { agentMessage, textPart } from './agent-messages.js'
import { heldForPerson } from './held-tasks.js'
import type { InboxWiring } from './inbox.js'
import { MOVED_RETRIES } from './reply-addressing.js'
import { lastTaskTurn } from './turn-plan.js'

/** The conversation with its new ownership; undefined: unknown conversation. */
export async function setOwnership (
  wiring: InboxWiring, agentId: string, contextId: string, ownership: OwnershipState, trace: Context | undefined
): Promise<ConversationState | undefined> {
  const { store, inStore, heldTask, writeTask, newId } = wiring
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
  return state
}
