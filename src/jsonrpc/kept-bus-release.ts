/**
 * Releases the SDK's event bus of an interrupted task once the task ends somewhere else.
 *
 * Why: DefaultRequestHandler keeps a task's bus alive when its executor leaves it INPUT_REQUIRED or AUTH_REQUIRED
 * (`keepBusAliveStates`), for a follow-up message or a resubscriber. When the task then ends without another
 * execution on it (the conversation continued in a new task and closed this one, written straight to the task
 * store and announced on the task event hub), nothing ever settles that bus: it stays in the manager's map for
 * the life of the process.
 *
 * How: this manager wraps the bus manager the handler uses. Offered a bus to settle (`settleByTaskId`) in an
 * interrupted state, it lets the handler keep it (answers false) and watches the task on the event source; an
 * event that ends the task finishes the bus and removes it. A new execution on the task (createOrGetByTaskId)
 * takes the bus back and ends the watch. A task that is abandoned for good keeps its bus, as before.
 */
import { TaskState } from '@a2a-js/sdk'
import type { ExecutionEventBus, ExecutionEventBusManager, ServerCallContext } from '@a2a-js/sdk/server'
import { endsTask, type TaskEventSource, type TaskStreamEvent } from './task-event-relay.js'

/** The states the SDK keeps a bus alive in (its INTERRUPTED_STATE_LIST). */
const INTERRUPTED: ReadonlySet<TaskState> = new Set([TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED])

export class KeptBusRelease implements ExecutionEventBusManager {
  readonly #inner: ExecutionEventBusManager
  readonly #events: TaskEventSource
  /** Unsubscribe functions of the watched tasks. */
  readonly #watches = new Map<string, () => void>()

  constructor (inner: ExecutionEventBusManager, events: TaskEventSource) {
    this.#inner = inner
    this.#events = events
  }

  /** How many kept buses are watched (for tests and metrics). */
  get watched (): number {
    return this.#watches.size
  }

  createOrGetByTaskId (taskId: string, context?: ServerCallContext): ExecutionEventBus {
    this.#unwatch(taskId)
    return this.#inner.createOrGetByTaskId(taskId, context)
  }

  getByTaskId (taskId: string, context?: ServerCallContext): ExecutionEventBus | undefined {
    return this.#inner.getByTaskId(taskId, context)
  }

  cleanupByTaskId (taskId: string, context?: ServerCallContext): void {
    this.#unwatch(taskId)
    this.#inner.cleanupByTaskId(taskId, context)
  }

  settleByTaskId (taskId: string, eventBus: ExecutionEventBus, lastState: TaskState | undefined, context: ServerCallContext): boolean {
    if (this.#inner.settleByTaskId?.(taskId, eventBus, lastState, context) === true) return true
    if (lastState !== undefined && INTERRUPTED.has(lastState)) this.#watch(taskId, context)
    return false
  }

  #watch (taskId: string, context: ServerCallContext): void {
    this.#unwatch(taskId)
    const unsubscribe = this.#events.subscribe(taskId, (event: TaskStreamEvent) => {
      if (!endsTask(event)) return
      this.#unwatch(taskId)
      this.#inner.getByTaskId(taskId, context)?.finished()
      this.#inner.cleanupByTaskId(taskId, context)
    })
    this.#watches.set(taskId, unsubscribe)
  }

  #unwatch (taskId: string): void {
    this.#watches.get(taskId)?.()
    this.#watches.delete(taskId)
  }
}
