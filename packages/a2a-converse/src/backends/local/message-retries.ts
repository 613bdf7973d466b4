/**
 * A retried SendMessage / SendStreamingMessage answered with its first reply (stores/message-replays.ts), for the
 * dispatcher (dispatch.ts), before anything runs: the first Message, or the task holding the first reply as GetTask
 * shows it (with the request's historyLength). A messageId used for other content is refused (-32602).
 */
import { GetTaskRequest, type Message, type SendMessageRequest, type Task } from '@a2a-js/sdk'
import type { DefaultRequestHandler, ServerCallContext, TaskStore } from '@a2a-js/sdk/server'
import { MessageIdReusedError, type MessageReplays } from '../../stores/message-replays.js'

export interface MessageRetries {
  /** The executor's record of what each messageId was answered with. */
  replays: MessageReplays
  taskStore: TaskStore
  handler: DefaultRequestHandler
}

/**
 * A retry's reply; undefined for a new message, or without `retries` (the executor keeps no record). The conversation
 * is the message's contextId, or its task's.
 */
export async function replayedReply (
  retries: MessageRetries | undefined, request: SendMessageRequest, context: ServerCallContext
): Promise<Message | Task | undefined> {
  if (retries === undefined) return undefined
  const message = request.message as Message
  let contextId = message.contextId
  if (contextId === '' && message.taskId !== '') contextId = (await retries.taskStore.load(message.taskId, context))?.contextId ?? ''
  // contextId '': a new conversation (the executor may refuse it: a per-caller bound).
  const replay = await retries.replays.replayOf(message, contextId, context)
  if (replay === undefined) return undefined
  if (replay.kind === 'conflict') throw new MessageIdReusedError(message.messageId)
  if (replay.kind === 'message') return replay.message
  const view = GetTaskRequest.fromJSON({ id: replay.taskId, historyLength: request.configuration?.historyLength })
  return await retries.handler.getTask(view, context)
}
