/**
 * Keeps a task stream open past the SDK's own stream and relays task events published from elsewhere
 * (a person's reply in a human-owned conversation, published after the executor returned).
 *
 * The SDK ends a stream when the executor returns, unless the task is AUTH_REQUIRED. A task left SUBMITTED
 * or WORKING (waiting on a person, say) would then go quiet for its client. With a task event source, the
 * relay subscribes to the task as soon as its id is known (SubscribeToTask: the params; SendStreamingMessage:
 * the first `task` result), holds the events that arrive while the SDK stream runs, and when the SDK stream
 * ends on a task that is neither terminal nor INPUT_REQUIRED, yields them and every later one until an event
 * puts the task in one of those states. Message streams are left as they are. `release()` unsubscribes and
 * ends the wait at once (client gone, server closing). No timers.
 *
 * An event that ends the task (a terminal state) arriving while the SDK stream still runs ends the SDK stream
 * through `stopSource`, then is yielded: a task closed from elsewhere (the conversation moved on to a new task,
 * closing the one left INPUT_REQUIRED) would otherwise leave a SubscribeToTask stream waiting on the SDK's bus,
 * which never hears of it.
 */

/** A2A 1.0 wire StreamResponse objects: { statusUpdate } | { artifactUpdate } | { task }. */
export type TaskStreamEvent = Record<string, unknown>

/** The part of a task event hub the relay uses (structural, so any hub implementation fits). */
export interface TaskEventSource {
  /** Returns the function that unsubscribes. */
  subscribe (taskId: string, listener: (event: TaskStreamEvent) => void): () => void
}

export interface RelayedStream {
  source: AsyncGenerator<unknown, void, undefined>
  release (): void
}

/** Terminal states (§3.1.2), as the wire writes them. */
const TERMINAL_STATES: ReadonlySet<string> = new Set([
  'TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'
])
/** States after which a stream ends (terminal; INPUT_REQUIRED as the SDK does). */
const FINAL_STATES: ReadonlySet<string> = new Set([...TERMINAL_STATES, 'TASK_STATE_INPUT_REQUIRED'])

interface Observed { taskId?: string, state?: string }

/** Whether a task event (wire StreamResponse) puts its task in a terminal state. */
export function endsTask (event: TaskStreamEvent): boolean {
  const state = observe(event).state
  return state !== undefined && TERMINAL_STATES.has(state)
}

function observe (result: unknown): Observed {
  const wrapper = result as { task?: { id?: string, status?: { state?: string } }, statusUpdate?: { status?: { state?: string } } }
  if (wrapper?.task !== undefined) return { taskId: wrapper.task.id, state: wrapper.task.status?.state }
  return { state: wrapper?.statusUpdate?.status?.state }
}

export function relayTaskEvents (
  stream: AsyncGenerator<unknown, void, undefined>, events: TaskEventSource, taskId?: string, stopSource?: () => void
): RelayedStream {
  const held: TaskStreamEvent[] = []
  let unsubscribe: (() => void) | undefined
  let wake: (() => void) | undefined
  let released = false
  let sourceRunning = true
  let sourceStopped = false

  const listen = (id: string): void => {
    if (unsubscribe !== undefined || released) return
    unsubscribe = events.subscribe(id, (event) => {
      held.push(event)
      wake?.()
      if (sourceRunning && stopSource !== undefined && endsTask(event)) {
        sourceStopped = true
        stopSource()
      }
    })
  }
  const stopListening = (): void => {
    unsubscribe?.()
    unsubscribe = undefined
  }
  const release = (): void => {
    released = true
    stopListening()
    wake?.()
  }

  async function * relay (): AsyncGenerator<unknown, void, undefined> {
    let taskStream = taskId !== undefined
    let state: string | undefined
    if (taskId !== undefined) listen(taskId)
    try {
      for await (const result of stream) {
        const observed = observe(result)
        if (typeof observed.taskId === 'string') {
          taskStream = true
          listen(observed.taskId)
        }
        state = observed.state ?? state
        yield result
      }
      sourceRunning = false
      if (!sourceStopped && (!taskStream || (state !== undefined && FINAL_STATES.has(state)))) return
      while (true) {
        if (released) return
        const event = held.shift()
        if (event === undefined) {
          await new Promise<void>((resolve) => { wake = resolve })
          wake = undefined
          continue
        }
        yield event
        const next = observe(event).state
        if (next !== undefined && FINAL_STATES.has(next)) return
      }
    } finally {
      stopListening()
    }
  }

  return { source: relay(), release }
}
