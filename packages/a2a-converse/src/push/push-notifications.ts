/**
 * Push notifications for an agent: its config store, the URL policy configs are checked against, and the task store
 * that reports each save's updates (task-updates.ts) to the deliverer, for every config of the task at that moment.
 * The task store given is wrapped (`withPushNotifications`); the PostgreSQL store records its notifications itself,
 * in the save's transaction (packages/a2a-converse/src/stores/postgres/push-outbox.ts).
 */
import type { Task } from '@a2a-js/sdk'
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server'
import { TERMINAL_TASK_STATES } from '../stores/task-states.js'
import type { PushConfigStore } from './push-config-store.js'
import type { PushDeliverer } from './push-deliverer.js'
import { taskDigest, updatesSince, type TaskDigest } from './task-updates.js'
import { traceContextIn } from '../telemetry/tracing.js'
import type { PushUrlPolicy } from './url-guard.js'
import { decorateTaskStore } from '../stores/decorate-task-store.js'

/** What the local backend needs to serve the four config methods and inline configs. */
export interface AgentPush {
  configs: PushConfigStore
  policy: PushUrlPolicy
}

/** Tasks whose last saver here is remembered at most (past it the oldest goes: that task's next save loads). */
export const REMEMBERED_SAVES = 10_000

/** A request's own: a number that tells it apart, and what its last save of each task stored. */
interface RequestSaves {
  id: number
  saved: Map<string, TaskDigest>
}

/**
 * The store with each save's updates queued for the task's configs (in the save's scope). Saves of one task are
 * one at a time (the SDK's ResultManager lock and the task turn lock), so the task read before a save is the one it
 * replaces. A finished task's configs go once its last updates are queued. Other members of the store (save
 * signals, reservations) are the store's (decorateTaskStore).
 *
 * A save that follows the same request's save of the task here (the same call context: a turn saves its task a few
 * times, its status, each artifact, its closing status) is told from what that save stored, kept as a digest with
 * the request's context (and dropped with it), rather than from a load of the whole task, history and all: ≈ 15 % of
 * the push path's own instructions (`npm run bench:push-instructions`; docs/push.md, "What a notification costs").
 * Another request's save in between (a cancel, a sibling ResultManager) went through here too and is the task's
 * last saver now: the next save loads. A store shared with other processes would not show their saves here: their
 * writes between two saves of one request are the one case told from the request's own last save.
 */
export function withPushNotifications (
  store: TaskStore, agentId: string, configs: PushConfigStore, deliverer: PushDeliverer, rememberedSaves = REMEMBERED_SAVES
): TaskStore {
  const requests = new WeakMap<ServerCallContext, RequestSaves>()
  let requestCount = 0
  // By task id, the request whose save of it with configs was the last made here (its number: no context is held).
  const lastSaver = new Map<string, number>()
  const save: TaskStore['save'] = async (task: Task, context: ServerCallContext) => {
    const held = await configs.configsOf(task.id, context)
    const saver = lastSaver.get(task.id)
    // Forgotten until this save is stored (a save that fails leaves the stored task unknown).
    lastSaver.delete(task.id)
    if (held.length === 0) {
      await store.save(task, context)
      return
    }
    let request = requests.get(context)
    if (request === undefined) requests.set(context, request = { id: requestCount++, saved: new Map() })
    const own = saver === request.id ? request.saved.get(task.id) : undefined
    request.saved.delete(task.id)
    const previous = own ?? await storedDigest(task.id, context)
    await store.save(task, context)
    const { updates, digest } = updatesSince(previous, task)
    if (!TERMINAL_TASK_STATES.has(task.status?.state)) {
      request.saved.set(task.id, digest)
      lastSaver.set(task.id, request.id)
      if (lastSaver.size > rememberedSaves) lastSaver.delete(lastSaver.keys().next().value as string)
    }
    if (updates.length > 0) deliverer.enqueue(agentId, task.id, held, updates, traceContextIn(context?.state))
    if (TERMINAL_TASK_STATES.has(task.status?.state)) await configs.dropTask(task.id, context)
  }
  async function storedDigest (taskId: string, context: ServerCallContext): Promise<TaskDigest | undefined> {
    const stored = await store.load(taskId, context)
    return stored === undefined ? undefined : taskDigest(stored)
  }
  return decorateTaskStore(store, { save })
}
