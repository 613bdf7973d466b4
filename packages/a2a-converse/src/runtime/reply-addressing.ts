/**
 * Where a person's reply goes (runtime/inbox.ts): to the task the conversation holds for a person, else to the
 * conversation's inbox — decided inside the conversation's update, as a pure function of the conversation read.
 */
import type { ConversationState, HumanReply } from '../stores/conversation-store.js'
import { lastTaskTurn } from './turn-plan.js'

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
export interface AddressedReply { addressing: Addressing, next?: ConversationState }

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
export const MOVED_RETRIES = 3

/**
 * How many times a reply is addressed: to the held task, again to the task held after that one ended in between,
 * then to the inbox.
 */
export const REPLY_ATTEMPTS = 3
