/**
 * What the turn planner (turn-plan.ts) reads of the request behind a turn: the message, its ids, the caller and
 * whether the converse extension is active, read once from the SDK's RequestContext, so the planner stays a pure
 * function of the conversation and this input.
 */
import type { Message } from '@a2a-js/sdk'
import type { RequestContext } from '@a2a-js/sdk/server'
import { callerIdOf } from '../auth/sdk-user.js'
import { CONVERSE_EXTENSION_URI } from '../core/uri.js'

/** What the planner reads of a request. */
export interface TurnInput {
  message: Message
  /** The client's contextId. */
  contextId: string
  /** The task this turn answers in when its reply goes into a task. */
  taskId: string
  /** The task the message continues (it named one that exists), if any. */
  existingTaskId?: string
  callerId?: string
  /** Whether the request activated the converse extension (a typed call counts only then). */
  activated: boolean
  /** This turn's id (the envelope's originatingTurnId). */
  turnId: string
  /** ISO time the turn is recorded at. */
  at: string
}

/** Whether the request that runs this turn activated the converse extension (the gateway always declares it). */
function requestActivated (requestContext: RequestContext): boolean {
  const requested = requestContext.context?.requestedExtensions as Iterable<string> | undefined
  return requested !== undefined && [...requested].includes(CONVERSE_EXTENSION_URI)
}

/** What the planner reads of the request behind a turn. */
export function turnInput (requestContext: RequestContext, turnId: string): TurnInput {
  return {
    message: requestContext.userMessage,
    contextId: requestContext.contextId,
    taskId: requestContext.taskId,
    existingTaskId: requestContext.task?.id,
    callerId: callerIdOf(requestContext.context),
    activated: requestActivated(requestContext),
    turnId,
    at: new Date().toISOString()
  }
}
