/**
 * Lets a stream's consumer stop the SDK's event queue for one request, right away.
 *
 * Why: DefaultRequestHandler.sendMessageStream / resubscribe iterate an ExecutionEventQueue that waits for
 * the next bus event. `return()` on those generators is queued behind that pending wait, so a client that
 * disconnects from a quiet task would leave the queue's listeners on the bus until the task's next event
 * — forever for an agent that never publishes again. Closing a stream must not touch the task or other
 * streams (A2A §3.5.2), so we can neither cancel the task nor emit `finished` on the shared bus.
 *
 * How: the handler asks its bus manager for the bus with the request's ServerCallContext. For contexts
 * registered with `watch`, the manager hands out a thin view of the real bus that remembers the first
 * `finished` listener added through it — the queue's own stop handler, which the SDK registers right after
 * fetching the bus and before the executor runs. `abort(context)` calls that listener: the queue stops,
 * removes its listeners, and the SDK generator completes. Everything else is delegated unchanged.
 */
import type { TaskState } from '@a2a-js/sdk'
import {
  DefaultExecutionEventBusManager,
  type AgentExecutionEvent, type EventListener, type ExecutionEventBus, type ExecutionEventBusManager,
  type ExecutionEventName, type FinishedListener, type ServerCallContext
} from '@a2a-js/sdk/server'

interface Watch { stop?: FinishedListener }

export class AbortableBusManager implements ExecutionEventBusManager {
  readonly #inner: ExecutionEventBusManager
  readonly #watched = new WeakMap<ServerCallContext, Watch>()

  constructor (inner: ExecutionEventBusManager = new DefaultExecutionEventBusManager()) {
    this.#inner = inner
  }

  /** Marks a request's context: buses fetched with it can be aborted with `abort(context)`. */
  watch (context: ServerCallContext): void {
    this.#watched.set(context, {})
  }

  /** Stops the queue this context's stream reads from (idempotent; a no-op for unwatched contexts). */
  abort (context: ServerCallContext): void {
    const watch = this.#watched.get(context)
    this.#watched.delete(context)
    watch?.stop?.()
  }

  createOrGetByTaskId (taskId: string, context?: ServerCallContext): ExecutionEventBus {
    return this.#view(this.#inner.createOrGetByTaskId(taskId, context), context)
  }

  getByTaskId (taskId: string, context?: ServerCallContext): ExecutionEventBus | undefined {
    const bus = this.#inner.getByTaskId(taskId, context)
    return bus === undefined ? undefined : this.#view(bus, context)
  }

  cleanupByTaskId (taskId: string, context?: ServerCallContext): void {
    this.#inner.cleanupByTaskId(taskId, context)
  }

  settleByTaskId (taskId: string, eventBus: ExecutionEventBus, lastState: TaskState | undefined, context: ServerCallContext): boolean {
    return this.#inner.settleByTaskId?.(taskId, eventBus, lastState, context) ?? false
  }

  #view (bus: ExecutionEventBus, context: ServerCallContext | undefined): ExecutionEventBus {
    const watch = context === undefined ? undefined : this.#watched.get(context)
    return watch === undefined ? bus : new WatchedBus(bus, watch)
  }
}

class WatchedBus implements ExecutionEventBus {
  readonly #bus: ExecutionEventBus
  readonly #watch: Watch

  constructor (bus: ExecutionEventBus, watch: Watch) {
    this.#bus = bus
    this.#watch = watch
  }

  publish (event: AgentExecutionEvent): void {
    this.#bus.publish(event)
  }

  finished (): void {
    this.#bus.finished()
  }

  on (eventName: 'event', listener: EventListener): this
  on (eventName: 'finished', listener: FinishedListener): this
  on (eventName: ExecutionEventName, listener: EventListener | FinishedListener): this {
    if (eventName === 'finished') {
      this.#watch.stop ??= listener as FinishedListener
      this.#bus.on('finished', listener as FinishedListener)
    } else {
      this.#bus.on('event', listener as EventListener)
    }
    return this
  }

  off (eventName: 'event', listener: EventListener): this
  off (eventName: 'finished', listener: FinishedListener): this
  off (eventName: ExecutionEventName, listener: EventListener | FinishedListener): this {
    if (eventName === 'finished') this.#bus.off('finished', listener as FinishedListener)
    else this.#bus.off('event', listener as EventListener)
    return this
  }

  once (eventName: 'event', listener: EventListener): this
  once (eventName: 'finished', listener: FinishedListener): this
  once (eventName: ExecutionEventName, listener: EventListener | FinishedListener): this {
    if (eventName === 'finished') this.#bus.once('finished', listener as FinishedListener)
    else this.#bus.once('event', listener as EventListener)
    return this
  }

  removeAllListeners (eventName?: ExecutionEventName): this {
    this.#bus.removeAllListeners(eventName)
    return this
  }
}
