/** Named errors of the stores that are not specific to one implementation. */
import { ConverseError, ERROR_CODES } from '../core/errors.js'

/**
 * The conversation store's database could not be reached (refused or timed-out connection, a connection lost
 * mid-call, the server shutting down or not answering within its statement timeout). The call did not hang: it
 * failed within the configured bounds. Retrying later is safe for reads; for an `update` whose commit was cut
 * off, the write may or may not have landed (re-read the conversation). `cause` is the driver's error.
 */
export class StoreUnavailableError extends ConverseError {
  constructor (cause?: unknown) {
    const detail = cause instanceof Error && cause.message !== '' ? `: ${cause.message}` : ''
    super(ERROR_CODES.STORE_UNAVAILABLE, `the conversation store is unreachable${detail}`)
    if (cause !== undefined) this.cause = cause
  }
}

/**
 * A turn's conversation write, joined to its task's saves (deferred-task-saves.ts), found the conversation moved when
 * they were written: nothing of the turn was stored (neither the conversation nor the task). Sending the message again
 * is safe. On the embedded database (its one writer) only a conversation removed meanwhile does that: one evicted at
 * its caller's bound (docs/state.md).
 */
export class ConversationMovedError extends ConverseError {
  constructor () {
    super(ERROR_CODES.CONVERSATION_MOVED, 'the conversation changed while the turn ran; nothing was stored: send the message again')
  }
}
