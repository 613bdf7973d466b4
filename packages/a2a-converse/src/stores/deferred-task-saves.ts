/**
 * A blocking turn's saves of its task, written once, before its reply (issue 43: a turn's trips to the database).
 *
 * The SDK saves a task at each event it processes — a step's user message, its artifact, its closing status — and
 * reads it again before each. A blocking SendMessage answers only once every event is processed, so nobody reads
 * those saves one by one: the dispatcher (backends/local/dispatch.ts) defers them for the request (`withDeferredSaves`)
 * when its executor publishes a turn's events all at once (`publishesTurnAtOnce`: a turn of the conversation executor
 * takes milliseconds, so the task is out of sight no longer than that), and a task store that can (`DefersTaskSaves`:
 * the PostgreSQL one) keeps each save in the request's call context, answers the request's reads from the last, and
 * writes them all in order in one statement when the request's events are done — before the reply, and before the
 * task's turn lock is released. The rows, refusals and push outbox rows are those the saves one by one would have
 * written; a save refused on the way rejects the write (the reply is that error, as it was).
 *
 * Deferred: the saves of one task — the one a step names, or a new task once its slot is reserved (`adoptTask`: a
 * reservation says it has no row). Never deferred: a stream's saves (each event is sent once saved), a SendMessage
 * that returns at once (`returnImmediately`), an executor that publishes over time (another client may read the task
 * meanwhile), saves of other tasks and of other requests.
 *
 * Joined: one write of another store's may go in the same statement (`joinDeferredSaves`): a routine turn's
 * conversation write (a step's, or a new conversation's insert, with its new task's reservation: `deferReservation`)
 * when it cannot find its row moved (postgres-conversation-store.ts, `joinsTaskSaves`: a new id's insert; with
 * `soleWriter`, this process alone writing the database, any), so that the turn is one round trip. It is written
 * whether or not the request saved anything.
 */
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server'

/** The call context state holding the request's deferred saves. */
const DEFERRED_TASK_SAVES_STATE = 'a2a-converse.deferredTaskSaves'

/** One request's deferred saves of one task: what the store would have written, in order (`Save`: the store's). */
export interface DeferredTaskSaves<Save = unknown> {
  /** The task whose saves are deferred; undefined until a new task's slot is reserved. */
  taskId: string | undefined
  /** The task is known to have no row (its slot was just reserved): a read before its first save answers none. */
  noRow: boolean
  readonly saves: Save[]
  /** Another store's write that goes in the saves' statement (joinDeferredSaves); undefined: none. */
  joined: JoinedWrite | undefined
  /** The new task's reservation, left to the saves' statement (deferReservation); undefined: none pending. */
  reservation: DeferredReservation | undefined
  /** What waits for the saves' statement to settle (afterDeferredSaves), in order. */
  readonly afterSaves: Array<() => void>
}

/**
 * A new task's reservation left to the request's deferred saves: its call (a function returning the outcome), which
 * a joined write that takes it runs ahead of its own (JoinedWrite.takesReservation), and how to run it alone.
 */
export interface DeferredReservation {
  call: DeferredSavesCall
  /** Runs it in a statement of its own; rejects when it is refused (nothing kept). */
  alone (): Promise<void>
  /** After another statement made it ahead of its own write: throws when its `outcome` refused it. */
  made (outcome: string): void
}

/** The task store's statement of the deferred saves: its function and that function's arguments, in order. */
export interface DeferredSavesCall {
  fn: string
  values: readonly unknown[]
}

/**
 * A joined write's outcome: written, with the saves' row (none when there were no saves); or nothing written at all —
 * with the reservation's outcome when it took one (`capped`: refused there).
 */
export type JoinedOutcome = { written: true, row: Record<string, unknown> | undefined } | { written: false, reservation?: string }

/**
 * A write of another store's that goes with the request's deferred saves. `write` runs it together with the saves'
 * call (undefined: alone) as one statement; `written: false` when its own write found its row moved since it was
 * planned — then nothing was written, the saves neither. `abandon` gives it up (nothing written) when the saves'
 * write failed before running it; once written, it does nothing. `written` settles with whether it was written.
 */
export interface JoinedWrite {
  readonly written: Promise<boolean>
  /** It runs a pending reservation ahead of itself (`write`'s second argument): an insert of a new conversation. */
  readonly takesReservation: boolean
  write (saves: DeferredSavesCall | undefined, reservation?: DeferredSavesCall): Promise<JoinedOutcome>
  abandon (): void
}

/** A task store that can defer a request's saves (PostgresTaskStore). */
export interface DefersTaskSaves {
  /** Writes the request's deferred saves, in order, and ends the deferral. Rejects as the failing save would have. */
  writeDeferredSaves (context: ServerCallContext): Promise<void>
}

export function defersTaskSaves (store: TaskStore): store is TaskStore & DefersTaskSaves {
  return typeof (store as Partial<DefersTaskSaves>).writeDeferredSaves === 'function'
}

/** An executor that publishes each turn's events at once, after deciding it (the conversation executor). */
export interface PublishesTurnAtOnce {
  readonly publishesTurnAtOnce: true
}

export function publishesTurnAtOnce (executor: object): executor is PublishesTurnAtOnce {
  return (executor as Partial<PublishesTurnAtOnce>).publishesTurnAtOnce === true
}

/**
 * Runs the request's turn with its saves of `taskId` (undefined: a new task, adopted at its reservation) deferred,
 * then writes them — whatever the turn's outcome: what it saved before failing is stored, as it would have been. A
 * failing write is the request's error.
 */
export async function withDeferredSaves<T> (store: DefersTaskSaves, context: ServerCallContext, taskId: string | undefined, turn: () => Promise<T>): Promise<T> {
  const deferred: DeferredTaskSaves = { taskId, noRow: false, saves: [], joined: undefined, reservation: undefined, afterSaves: [] }
  context.state.set(DEFERRED_TASK_SAVES_STATE, deferred)
  try {
    return await turn()
  } finally {
    try {
      await store.writeDeferredSaves(context)
    } finally {
      // Never left waiting: a joined write the store did not run (it failed first) is given up.
      deferred.joined?.abandon()
      for (const after of deferred.afterSaves) after()
    }
  }
}

/**
 * Runs `after` once the request's deferred saves of a task are written or failed, when the request defers them (true);
 * false: nothing deferred, `after` not kept (the caller runs it now). What a turn's statements set off then goes out
 * together (a server's NOTIFYs: the inbox's live event of a conversation written apart, with the saves' wake).
 */
export function afterDeferredSaves (context: ServerCallContext, after: () => void): boolean {
  const deferred = context.state.get(DEFERRED_TASK_SAVES_STATE) as DeferredTaskSaves | undefined
  if (deferred?.taskId === undefined) return false
  deferred.afterSaves.push(after)
  return true
}

/** The request's deferred saves of `taskId`, while they are deferred; undefined otherwise. */
export function deferredSavesOf<Save> (context: ServerCallContext, taskId: string): DeferredTaskSaves<Save> | undefined {
  const deferred = context.state.get(DEFERRED_TASK_SAVES_STATE) as DeferredTaskSaves<Save> | undefined
  return deferred?.taskId === taskId ? deferred : undefined
}

/** A new task's slot was reserved for the request: its saves are deferred when the request defers a new task's. */
export function adoptTask (context: ServerCallContext, taskId: string): void {
  const deferred = context.state.get(DEFERRED_TASK_SAVES_STATE) as DeferredTaskSaves | undefined
  if (deferred === undefined || deferred.taskId !== undefined) return
  deferred.taskId = taskId
  deferred.noRow = true
}

/**
 * Joins the write `join` makes to the request's deferred saves: true when the request defers a task's saves (a step's,
 * or a new task's once reserved: not a turn that saves no task) and has no joined write yet — the caller then leaves
 * its write to the task store's writeDeferredSaves; false (`join` not called): the caller writes it itself.
 */
export function joinDeferredSaves (context: ServerCallContext, join: () => JoinedWrite): boolean {
  const deferred = context.state.get(DEFERRED_TASK_SAVES_STATE) as DeferredTaskSaves | undefined
  if (deferred?.taskId === undefined || deferred.joined !== undefined) return false
  deferred.joined = join()
  return true
}

/**
 * Leaves the reservation of the new task `taskId` to the request's deferred saves, when the request defers a new
 * task's saves: the task is adopted (no row) and true is answered; false: the caller reserves now. For a caller whose
 * conversation store joins the saves and runs the request's pending reservation before any write it does not join
 * (`reservePending`): the reservation then still comes before the conversation's write.
 */
export function deferReservation (context: ServerCallContext, taskId: string, reservation: DeferredReservation): boolean {
  const deferred = context.state.get(DEFERRED_TASK_SAVES_STATE) as DeferredTaskSaves | undefined
  if (deferred === undefined || deferred.taskId !== undefined) return false
  adoptTask(context, taskId)
  deferred.reservation = reservation
  return true
}

/** Takes the request's pending reservation (deferReservation), if there is one, for a statement to make it. */
export function takePendingReservation (context: ServerCallContext | undefined): DeferredReservation | undefined {
  const deferred = context?.state.get(DEFERRED_TASK_SAVES_STATE) as DeferredTaskSaves | undefined
  const reservation = deferred?.reservation
  if (reservation !== undefined) (deferred as DeferredTaskSaves).reservation = undefined
  return reservation
}

/** Runs the request's pending reservation (deferReservation) in a statement of its own, if there is one. */
export async function reservePending (context: ServerCallContext | undefined): Promise<void> {
  await takePendingReservation(context)?.alone()
}

/** The write joined to the request's deferred saves, while they are deferred; undefined otherwise. */
export function joinedWriteOf (context: ServerCallContext): JoinedWrite | undefined {
  return (context.state.get(DEFERRED_TASK_SAVES_STATE) as DeferredTaskSaves | undefined)?.joined
}

/** Ends the request's deferral: what it deferred, if anything, to be written by the store. */
export function takeDeferredSaves<Save> (context: ServerCallContext): DeferredTaskSaves<Save> | undefined {
  const deferred = context.state.get(DEFERRED_TASK_SAVES_STATE) as DeferredTaskSaves<Save> | undefined
  context.state.delete(DEFERRED_TASK_SAVES_STATE)
  return deferred
}
