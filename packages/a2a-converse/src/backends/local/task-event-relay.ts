/**
 * The two streams that follow a task past what one execution publishes. No timers; both end at once on release()
 * (client gone, server closing) and unsubscribe.
 *
 * - SendStreamingMessage (`relayTaskEvents`): the SDK ends the stream when the executor returns. A task left SUBMITTED
 *   or WORKING (waiting on a person, say) would then go quiet for its client, so with a task event source the relay
 *   subscribes to the task as soon as its id is known (the first `task` result), holds what arrives while the SDK
 *   stream runs, and when the SDK stream ends on a task that is neither terminal nor INPUT_REQUIRED, yields the held
 *   events and every later one until one puts the task in one of those states. Message streams are left as they
 *   are. An event that ends the task arriving while the SDK stream still waits (a cancel on another instance) ends
 *   the stream with it.
 * - SubscribeToTask (`followTask`): the task as stored, then what every source says of it — the executions of this
 *   process (a2a/execution-buses.ts) and the task event hub — until a status update puts it in a terminal state or
 *   INPUT_REQUIRED (where the SDK's own event queue stops too).
 *
 * The SDK stream of a SendStreamingMessage is what stores the execution's events, so when the relay ends before it
 * (release, an end from elsewhere) it is read on to its own end in the background: the task keeps every event its
 * execution publishes whoever stopped listening, and the read ends with the execution (the handler keeps no bus).
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

function observe (result: unknown): Observed {
  const wrapper = result as { task?: { id?: string, status?: { state?: string } }, statusUpdate?: { status?: { state?: string } } }
  if (wrapper?.task !== undefined) return { taskId: wrapper.task.id, state: wrapper.task.status?.state }
  return { state: wrapper?.statusUpdate?.status?.state }
}

/** The state a status update (not a task snapshot) moves its task to. */
function updatedState (event: TaskStreamEvent): string | undefined {
  return (event as { statusUpdate?: { status?: { state?: string } } }).statusUpdate?.status?.state
}

/** Events held for a stream, and the wait for the next one. */
class Inbox {
  readonly #held: TaskStreamEvent[] = []
  #wake: (() => void) | undefined
  #closed = false

  push (event: TaskStreamEvent): void {
    this.#held.push(event)
    this.#wake?.()
  }

  /** The stream was released: what is held or comes later is not given out any more. */
  close (): void {
    this.#closed = true
    this.#wake?.()
  }

  /** The held events, then each later one, until one puts its task in a final state (by `stateOf`) or close(). */
  async * untilFinal (stateOf: (event: TaskStreamEvent) => string | undefined): AsyncGenerator<TaskStreamEvent, void, undefined> {
    while (!this.#closed) {
      const event = this.#held.shift()
      if (event === undefined) {
        await new Promise<void>((resolve) => { this.#wake = resolve })
        this.#wake = undefined
        continue
      }
      yield event
      const state = stateOf(event)
      if (state !== undefined && FINAL_STATES.has(state)) return
    }
  }
}

const STOPPED = Symbol('stopped')

/** Reads the rest of a stream nobody listens to any more; its failures are the SDK's to log. */
function readToEnd (stream: AsyncGenerator<unknown, void, undefined>, pending: Promise<IteratorResult<unknown>>): void {
  const read = async (): Promise<void> => {
    for (let step = await pending; step.done !== true; step = await stream.next());
  }
  read().then(undefined, () => {})
}

/** Without `events` (no hub: nothing writes a task from outside an execution) the stream is the SDK's, releasable. */
export function relayTaskEvents (stream: AsyncGenerator<unknown, void, undefined>, events: TaskEventSource | undefined): RelayedStream {
  const inbox = new Inbox()
  let unsubscribe: (() => void) | undefined
  let released = false
  let sourceRunning = true
  let stop!: (value: typeof STOPPED) => void
  const stopped = new Promise<typeof STOPPED>((resolve) => { stop = resolve })

  const listen = (taskId: string): void => {
    if (unsubscribe !== undefined || released || events === undefined) return
    unsubscribe = events.subscribe(taskId, (event) => {
      inbox.push(event)
      const state = updatedState(event)
      if (sourceRunning && state !== undefined && TERMINAL_STATES.has(state)) stop(STOPPED)
    })
  }
  const release = (): void => {
    released = true
    unsubscribe?.()
    unsubscribe = undefined
    stop(STOPPED)
    inbox.close()
  }

  async function * relay (): AsyncGenerator<unknown, void, undefined> {
    let taskStream = false
    let state: string | undefined
    let pending: Promise<IteratorResult<unknown>> | undefined
    let sourceDone = false
    try {
      while (true) {
        if (released) break
        pending ??= stream.next()
        let step: IteratorResult<unknown> | typeof STOPPED
        try {
          step = await Promise.race([pending, stopped])
        } catch (error) {
          sourceDone = true
          throw error
        }
        if (step === STOPPED) break
        pending = undefined
        if (step.done === true) {
          sourceDone = true
          break
        }
        const observed = observe(step.value)
        if (typeof observed.taskId === 'string') {
          taskStream = true
          listen(observed.taskId)
        }
        state = observed.state ?? state
        yield step.value
      }
      sourceRunning = false
      if (released || (sourceDone && (events === undefined || !taskStream || (state !== undefined && FINAL_STATES.has(state))))) return
      yield * inbox.untilFinal((event) => observe(event).state)
    } finally {
      sourceRunning = false
      unsubscribe?.()
      unsubscribe = undefined
      if (!sourceDone) readToEnd(stream, pending ?? stream.next())
    }
  }

  return { source: relay(), release }
}

/**
 * SubscribeToTask: `snapshot()` loads the task (and throws the request's error: not found, already over), every
 * source is listened to from before that load, so nothing published meanwhile is missed (an event the snapshot
 * already shows may come again).
 */
export function followTask (taskId: string, snapshot: () => Promise<TaskStreamEvent>, sources: readonly TaskEventSource[]): RelayedStream {
  const inbox = new Inbox()
  let released = false
  const unsubscribes: Array<() => void> = []
  const stopListening = (): void => {
    for (const unsubscribe of unsubscribes.splice(0)) unsubscribe()
  }
  const release = (): void => {
    released = true
    stopListening()
    inbox.close()
  }

  async function * follow (): AsyncGenerator<unknown, void, undefined> {
    if (released) return
    try {
      for (const source of sources) unsubscribes.push(source.subscribe(taskId, (event) => { inbox.push(event) }))
      yield await snapshot()
      yield * inbox.untilFinal(updatedState)
    } finally {
      stopListening()
    }
  }

  return { source: follow(), release }
}
