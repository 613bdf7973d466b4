/**
 * Human takeover: what the operator API does to a conversation. Ownership lives in the ConversationStore; a
 * person's reply becomes a ROLE_AGENT message with `author: human` in the task of the last suppressed turn —
 * written to the TaskStore (GetTask shows it) and published on the TaskEventHub (open streams receive it).
 */
import { randomUUID } from 'node:crypto'
import { Role, StreamResponse, TaskState, type Message, type Task } from '@a2a-js/sdk'
import { ServerCallContext, type TaskStore } from '@a2a-js/sdk/server'
import type { ConverseEnvelope, OwnershipState, RoutineState } from '../core/envelope.js'
import { CONVERSE_EXTENSION_URI } from '../core/uri.js'
import type { TaskEventHub } from '../events/task-event-hub.js'
import type { ConversationState, ConversationStore, ConversationTurn } from '../stores/conversation-store.js'
import { textPart } from './knowledge-executor.js'
import type { RoutineEngine } from './routine-engine.js'

export interface ConversationView {
  agentId: string
  contextId: string
  ownership: OwnershipState
  routine?: RoutineState
  /** The most recent turns, oldest first. */
  turns: ConversationTurn[]
}

export interface HumanReplyResult {
  contextId: string
  /** The task the reply was added to; absent when the conversation has no task yet (the reply is kept). */
  taskId?: string
  /** The reply as it travels on the wire (A2A 1.0 JSON). */
  message: Record<string, unknown>
}

export interface Inbox {
  view (agentId: string, contextId: string): Promise<ConversationView | undefined>
  takeover (agentId: string, contextId: string): Promise<ConversationView | undefined>
  release (agentId: string, contextId: string): Promise<ConversationView | undefined>
  /** undefined: unknown conversation; 'not_human_owned': take it over first. */
  reply (agentId: string, contextId: string, text: string): Promise<HumanReplyResult | 'not_human_owned' | undefined>
}

export interface InboxOptions {
  store: ConversationStore
  /** The task store of each agent (the same one its A2A endpoint uses). */
  taskStores: ReadonlyMap<string, TaskStore>
  events: TaskEventHub
  /** Routine engines by agent id, to show the routine in the view. */
  engines?: ReadonlyMap<string, RoutineEngine>
  recentTurns?: number
  newId?: () => string
}

/** The task of the conversation's latest user turn: where a person's reply (or the release) goes. */
function lastUserTask (state: ConversationState): string | undefined {
  return [...state.turns].reverse().find((turn) => turn.role === 'user' && turn.taskId !== undefined)?.taskId
}

export function createInbox (options: InboxOptions): Inbox {
  const { store, taskStores, events } = options
  const newId = options.newId ?? randomUUID
  const recent = options.recentTurns ?? 20

  function toView (state: ConversationState): ConversationView {
    const view: ConversationView = {
      agentId: state.agentId,
      contextId: state.contextId,
      ownership: state.ownership,
      turns: state.turns.slice(-recent)
    }
    const engine = options.engines?.get(state.agentId)
    if (state.routine !== undefined && engine !== undefined) view.routine = engine.routineState(state.routine)
    return view
  }

  async function setOwnership (agentId: string, contextId: string, ownership: OwnershipState) {
    if (!await store.exists(agentId, contextId)) return undefined
    let released: string | undefined
    const state = await store.update(agentId, contextId, (current) => {
      const next = current as ConversationState
      if (next.ownership !== ownership) {
        if (ownership === 'ai_owned') released = lastUserTask(next)
        next.ownership = ownership
        next.ownershipChangedAt = new Date().toISOString()
      }
      return next
    })
    if (released !== undefined) await completeHeldTask(agentId, contextId, released)
    return toView(state)
  }

  /**
   * Release ends the task that held the person's side of the conversation (it waited in WORKING), so the
   * streams on it close and the client's next message starts a fresh task with the agent.
   */
  async function completeHeldTask (agentId: string, contextId: string, taskId: string): Promise<void> {
    const text = 'The conversation is back with the assistant.'
    const message = agentMessage(contextId, taskId, text, {
      author: 'agent',
      answerCoverage: { availability: 'not_recorded' },
      ownership: { state: 'ai_owned', suppressed: false }
    })
    await updateTask(agentId, contextId, taskId, TaskState.TASK_STATE_COMPLETED, message)
  }

  function agentMessage (contextId: string, taskId: string | undefined, text: string, envelope: ConverseEnvelope): Message {
    return {
      messageId: newId(),
      contextId,
      taskId: taskId ?? '',
      role: Role.ROLE_AGENT,
      parts: [textPart(text)],
      metadata: { [CONVERSE_EXTENSION_URI]: envelope },
      extensions: [CONVERSE_EXTENSION_URI],
      referenceTaskIds: []
    }
  }

  /** Appends the message to a non-terminal task, sets its status, and tells open streams. */
  async function updateTask (agentId: string, contextId: string, taskId: string, state: TaskState, message: Message): Promise<void> {
    const taskStore = taskStores.get(agentId)
    if (taskStore === undefined) return
    const context = new ServerCallContext()
    const task: Task | undefined = await taskStore.load(taskId, context)
    if (task === undefined || task.status?.state !== TaskState.TASK_STATE_WORKING) return
    task.history = [...task.history, message]
    task.status = { state, message, timestamp: new Date().toISOString() }
    await taskStore.save(task, context)
    await events.publish(taskId, StreamResponse.toJSON({
      payload: { $case: 'statusUpdate', value: { taskId, contextId, status: task.status, metadata: undefined } }
    }) as Record<string, unknown>)
  }

  return {
    async view (agentId, contextId) {
      const state = await store.get(agentId, contextId)
      return state === undefined ? undefined : toView(state)
    },
    takeover: (agentId, contextId) => setOwnership(agentId, contextId, 'human_owned'),
    release: (agentId, contextId) => setOwnership(agentId, contextId, 'ai_owned'),
    async reply (agentId, contextId, text) {
      if (!await store.exists(agentId, contextId)) return undefined
      let outcome: 'not_human_owned' | { taskId?: string, turnId: string } = 'not_human_owned'
      await store.update(agentId, contextId, (current) => {
        const state = current as ConversationState
        if (state.ownership !== 'human_owned') return state
        const taskId = lastUserTask(state)
        const turnId = newId()
        state.turns.push({ id: turnId, at: new Date().toISOString(), role: 'human', text, taskId })
        outcome = { taskId, turnId }
        return state
      })
      if (outcome === 'not_human_owned') return outcome
      const { taskId, turnId } = outcome as { taskId?: string, turnId: string }
      const envelope: ConverseEnvelope = {
        author: 'human',
        answerCoverage: { availability: 'not_recorded', originatingTurnId: turnId },
        ownership: { state: 'human_owned', suppressed: false }
      }
      const message = agentMessage(contextId, taskId, text, envelope)
      if (taskId !== undefined) await updateTask(agentId, contextId, taskId, TaskState.TASK_STATE_WORKING, message)
      const wire = StreamResponse.toJSON({ payload: { $case: 'message', value: message } }) as { message: Record<string, unknown> }
      return { contextId, ...(taskId !== undefined ? { taskId } : {}), message: wire.message }
    }
  }
}
