/**
 * The event buses of the executions running in this process, and what they publish, per task.
 *
 * The SDK's request handler gets its buses here (the documented ExecutionEventBusManager interface). It is built
 * with no keep-alive states (A2ADispatcher), so a bus lives exactly as long as its execution: the handler finishes
 * and removes it when the executor returns, whatever state the task was left in. Nothing then has to release a bus
 * kept for an interrupted task, or stop a stream's queue waiting on one: a stream that follows a task
 * (SubscribeToTask, jsonrpc/task-event-relay.ts) is not a reader of any bus, it is a subscriber here, by task id,
 * for every execution on the task in this process — the one running now and the ones later messages start — and on
 * the task event hub for updates written from outside an execution (a2a/task-writer.ts).
 */
import { StreamResponse } from '@a2a-js/sdk'
import {
  DefaultExecutionEventBusManager, type AgentExecutionEvent, type ExecutionEventBus, type ExecutionEventBusManager,
  type ServerCallContext
} from '@a2a-js/sdk/server'
import type { TaskEventSource, TaskStreamEvent } from './task-event-relay.js'

type Listener = (event: TaskStreamEvent) => void

export class ExecutionBuses implements ExecutionEventBusManager, TaskEventSource {
  readonly #buses = new DefaultExecutionEventBusManager()
  /** Subscribers by task id; an entry exists only while it has one (bounded by the open streams). */
  readonly #subscribers = new Map<string, Set<Listener>>()

  createOrGetByTaskId (taskId: string, context?: ServerCallContext): ExecutionEventBus {
    const existing = this.#buses.getByTaskId(taskId, context)
    if (existing !== undefined) return existing
    const bus = this.#buses.createOrGetByTaskId(taskId, context)
    // The first listener, added before the handler's own: subscribers see an event when it is published.
    bus.on('event', (event) => { this.#deliver(event) })
    return bus
  }

  getByTaskId (taskId: string, context?: ServerCallContext): ExecutionEventBus | undefined {
    return this.#buses.getByTaskId(taskId, context)
  }

  cleanupByTaskId (taskId: string, context?: ServerCallContext): void {
    this.#buses.cleanupByTaskId(taskId, context)
  }

  /** Follows what executions in this process publish for the task (wire StreamResponse objects, Messages left out). */
  subscribe (taskId: string, listener: Listener): () => void {
    let set = this.#subscribers.get(taskId)
    if (set === undefined) {
      set = new Set()
      this.#subscribers.set(taskId, set)
    }
    set.add(listener)
    return () => {
      set.delete(listener)
      if (set.size === 0 && this.#subscribers.get(taskId) === set) this.#subscribers.delete(taskId)
    }
  }

  /** How many tasks have subscribers (for tests and metrics). */
  get subscribedTasks (): number {
    return this.#subscribers.size
  }

  #deliver (event: AgentExecutionEvent): void {
    if (this.#subscribers.size === 0 || event.kind === 'message') return
    // An event belongs to the task it names, whichever bus carried it.
    const taskId = event.kind === 'task' ? event.data.id : event.data.taskId
    const listeners = this.#subscribers.get(taskId)
    if (listeners === undefined) return
    const wire = StreamResponse.toJSON({ payload: wrap(event) }) as TaskStreamEvent
    for (const listener of [...listeners]) listener(wire)
  }
}

function wrap (event: Exclude<AgentExecutionEvent, { kind: 'message' }>): NonNullable<StreamResponse['payload']> {
  switch (event.kind) {
    case 'task': return { $case: 'task', value: event.data }
    case 'statusUpdate': return { $case: 'statusUpdate', value: event.data }
    default: return { $case: 'artifactUpdate', value: event.data }
  }
}
