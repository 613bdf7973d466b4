/**
 * The task a conversation holds for a person (its last task, while WORKING) and writing a status to it after the
 * conversation's change committed — under the task's turn lock, only while the task still waits (runtime/inbox.ts).
 */
import { TaskState, type Message, type Task } from '@a2a-js/sdk'
import type { TaskStore } from '@a2a-js/sdk/server'
import { createTaskWriter, type TaskWriter } from '../events/task-writer.js'
import type { TaskEventHub } from '../events/task-event-hub.js'
import { callerContext } from '../auth/sdk-user.js'
import { TaskBusyError, type TaskTurnLock, type TaskTurnRelease } from '../stores/task-turn-lock.js'
import { acquireTurn } from '../stores/traced-turn-lock.js'
import { traceContextState, type Context } from '../telemetry/tracing.js'
import { clientContextId, type ConversationState } from '../stores/conversation-store.js'
import { lastTaskTurn } from './turn-plan.js'

export interface HeldTaskWriter {
  heldTask: (agentId: string, state: ConversationState, trace: Context | undefined) => Promise<string | undefined>
  writeTask: (
    conversation: ConversationState, taskId: string, state: TaskState, message: Message, waiting: (task: Task) => boolean, trace: Context | undefined
  ) => Promise<'landed' | 'ended' | 'busy'>
}

/** The held tasks of the agents whose task stores (and turn locks) are given. */
export function heldTaskWriter (taskStores: ReadonlyMap<string, TaskStore>, events: TaskEventHub, turnLocks: ReadonlyMap<string, TaskTurnLock> | undefined): HeldTaskWriter {
  // One writer per task store, made on first use (an agent served from a later change brings a store of its own).
  const writers = new WeakMap<TaskStore, TaskWriter>()
  const writerOf = (taskStore: TaskStore): TaskWriter => {
    let writer = writers.get(taskStore)
    if (writer === undefined) writers.set(taskStore, writer = createTaskWriter(taskStore, events))
    return writer
  }

  /** The task the conversation holds for a person: its last task, while that task is WORKING. */
  async function heldTask (agentId: string, state: ConversationState, trace: Context | undefined): Promise<string | undefined> {
    const taskId = lastTaskTurn(state)?.taskId
    if (taskId === undefined) return undefined
    // The task is in its caller's scope (a walk-in's without a caller).
    const task = await (taskStores.get(agentId) as TaskStore).load(taskId, callerContext(state.caller?.id, traceContextState(trace)))
    return task?.status?.state === TaskState.TASK_STATE_WORKING ? taskId : undefined
  }

  /**
   * Writes a status to a task of the conversation after the conversation's change committed, under the task's turn
   * lock (a client turn on the task runs before or after, never meanwhile), if the task is still in the state the
   * change was decided on (`waiting`); through the task writer: stored, then published to open streams on every
   * instance. `landed`: the task holds the message; `ended`: the task ended in between (nothing stored; a write that
   * lost the race to the end by a hair was published to streams that end had already closed); `busy`: a client turn
   * held the task past the lock's wait bound (nothing written).
   */
  async function writeTask (
    conversation: ConversationState, taskId: string, state: TaskState, message: Message, waiting: (task: Task) => boolean,
    trace: Context | undefined
  ): Promise<'landed' | 'ended' | 'busy'> {
    const agentId = conversation.agentId
    const context = callerContext(conversation.caller?.id, traceContextState(trace))
    const lock = turnLocks?.get(agentId)
    let release: TaskTurnRelease | undefined
    try {
      release = lock === undefined ? undefined : await acquireTurn(lock, context, taskId)
    } catch (error) {
      if (error instanceof TaskBusyError) return 'busy'
      throw error
    }
    try {
      const taskStore = taskStores.get(agentId) as TaskStore
      const task = await taskStore.load(taskId, context)
      if (task === undefined || !waiting(task)) return 'ended'
      const status = { state, message, timestamp: new Date().toISOString() }
      await writerOf(taskStore).write({ taskId, contextId: clientContextId(conversation), status, metadata: undefined }, context)
      // A write that lost to a task's end (a superseding turn's close, which takes no turn lock) is refused by the
      // store: what it holds now says whether this one landed.
      return (await taskStore.load(taskId, context))?.status?.message?.messageId === message.messageId ? 'landed' : 'ended'
    } finally {
      await release?.()
    }
  }

  return { heldTask, writeTask }
}

/** A task still waiting for a person: WORKING (the held task's state; a client turn on it moves it on). */
export function heldForPerson (task: Task): boolean {
  return task.status?.state === TaskState.TASK_STATE_WORKING
}
