/**
 * The local backend: an @a2a-js/sdk AgentExecutor in this process, answered through the SDK's request handler
 * (jsonrpc/dispatch.ts). With a task event source, streams also carry task events written from outside an
 * execution (a person's reply, a cancel, a superseding turn) and end when one of them ends the task.
 */
import type { AgentExecutor, TaskStore } from '@a2a-js/sdk/server'
import { A2ADispatcher } from './dispatch.js'
import { callerKey } from '../../stores/caller-key.js'
import { extendedAgentCardNotConfigured, type JsonRpcError } from '../../protocol/errors.js'
import type { TaskEventSource } from './task-event-relay.js'
import type { TaskTurnLock } from '../../stores/task-turn-lock.js'
import type { AgentPush } from '../../push/push-notifications.js'
import type { A2ABackend, BackendContext } from '../../protocol/backend.js'
import { ConverseError, ERROR_CODES } from '../../core/errors.js'

export interface LocalBackendOptions {
  /** The agent card (ProtoJSON) the SDK's request handler gets: its capabilities are what the agent serves. */
  card: Record<string, unknown>
  executor: AgentExecutor
  /** Default: a new InMemoryTaskStore. */
  taskStore?: TaskStore
  /** Turns on one task, one at a time. Default: a MemoryTaskTurnLock (this process). */
  turnLock?: TaskTurnLock
  /** Task events published from outside an execution (the task event hub); relayed to open streams of the task. */
  events?: TaskEventSource
  /** Answers GetExtendedAgentCard (when the card declares it); without it such a request is -32007. */
  extendedCard?: (context: BackendContext) => unknown
  /** See DispatcherOptions.leanSendMessage. Default true. */
  leanSendMessage?: boolean
  /** See DispatcherOptions.push. */
  push?: AgentPush
}

/** An A2A error decided by a backend itself (not thrown by the SDK). */
export class A2AReplyError extends ConverseError {
  readonly error: JsonRpcError

  constructor (error: JsonRpcError) {
    super(ERROR_CODES.REPLY, error.message)
    this.error = error
  }
}

export function localBackend (options: LocalBackendOptions): A2ABackend {
  const { events, extendedCard } = options
  const dispatcher = new A2ADispatcher({
    card: options.card, executor: options.executor, taskStore: options.taskStore, turnLock: options.turnLock, events, leanSendMessage: options.leanSendMessage, push: options.push
  })

  function sdkContext (request: Parameters<A2ABackend['call']>[0], context: BackendContext) {
    return dispatcher.createContext(request, {
      requestedExtensions: context.requestedExtensions,
      version: context.version,
      headers: context.headers as Record<string, string>,
      callerId: context.caller?.id,
      callerKey: callerKey(context.caller?.id, context.clientAddress),
      traceContext: () => context.traceContext
    })
  }

  return {
    facts: dispatcher.facts,
    async call (request, context) {
      if (request.method === 'GetExtendedAgentCard') {
        if (extendedCard === undefined) throw new A2AReplyError(extendedAgentCardNotConfigured())
        return await extendedCard(context)
      }
      return await dispatcher.invoke(request, sdkContext(request, context), { log: context.log, signal: context.signal })
    },
    stream (request, context) {
      const { source, release } = dispatcher.open(request, sdkContext(request, context))
      // An async generator finishes a return() only after its pending wait: end that wait now.
      context.signal.addEventListener('abort', release, { once: true })
      return source
    },
    toError (error, request, log) {
      return error instanceof A2AReplyError ? error.error : dispatcher.toError(error, request, log)
    }
  }
}
