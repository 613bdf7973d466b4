/**
 * A person's reply to a conversation: addressed (reply-addressing.ts) to the task the conversation holds for a
 * person, else kept in its inbox, then written to that task under its turn lock; a reply whose task ended in
 * between is addressed again. Nothing a person wrote is lost or written twice.
 */
import { StreamResponse, TaskState } from '@a2a-js/sdk'
import { clientContextId, type ConversationState, type HumanReply } from '../stores/conversation-store.js'
import type { Context } from '../telemetry/tracing.js'
import { humanMessage } from './agent-messages.js'
import { heldForPerson } from './held-tasks.js'
import type { HumanReplyResult, InboxWiring } from './inbox.js'
import { addressReply, MOVED_RETRIES, REPLY_ATTEMPTS, type AddressedReply, type Addressing, type HeldTask } from './reply-addressing.js'
import { lastTaskTurn } from './turn-plan.js'

/**
 * One attempt at addressing a reply (see addressReply), looking the held task up again while a client turn keeps
 * giving the conversation a newer one (at most MOVED_RETRIES times, then the inbox). The held task is looked up
 * before the conversation's update, not inside it: the update holds the conversation's row while it runs (on the
 * embedded database, its only session), so a task load there would wait for the update itself.
 */
async function address (
  wiring: InboxWiring, agentId: string, contextId: string, reply: HumanReply, attempt: number, trace: Context | undefined
): Promise<{ addressing: Addressing, state: ConversationState }> {
  const { store, inStore, heldTask } = wiring
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

/** Inbox.reply: undefined for an unknown conversation. */
export async function replyAsPerson (
  wiring: InboxWiring, agentId: string, contextId: string, text: string, trace: Context | undefined
): Promise<HumanReplyResult | 'not_human_owned' | 'inbox_full' | undefined> {
  const { store, inStore, writeTask, newId } = wiring
  if (!await inStore('exists', agentId, trace, async () => await store.exists(agentId, contextId))) return undefined
  const reply = { id: newId(), at: new Date().toISOString(), text }
  let result: HumanReplyResult | undefined
  // Ends by the last attempt at the latest: it never addresses a task (see addressReply).
  for (let attempt = 0; ; attempt++) {
    const { addressing, state } = await address(wiring, agentId, contextId, reply, attempt, trace)
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
