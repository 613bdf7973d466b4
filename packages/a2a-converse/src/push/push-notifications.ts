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
import { taskUpdates } from './task-updates.js'
import { traceContextIn } from '../telemetry/tracing.js'
import type { PushUrlPolicy } from './url-guard.js'
import { decorateTaskStore } from '../stores/decorate-task-store.js'

/** What the local backend needs to serve the four config methods and inline configs. */
export interface AgentPush {
  configs: PushConfigStore
  policy: PushUrlPolicy
}

/**
 * The store with each save's updates queued for the task's configs (in the save's scope). Saves of one task are
 * one at a time (the SDK's ResultManager lock and the task turn lock), so the task read before a save is the one it
 * replaces. A finished task's configs go once its last updates are queued. Other members of the store (save
 * signals, reservations) are the store's (decorateTaskStore).
 */
export function withPushNotifications (store: TaskStore, agentId: string, configs: PushConfigStore, deliverer: PushDeliverer): TaskStore {
  const save: TaskStore['save'] = async (task: Task, context: ServerCallContext) => {
    const held = await configs.configsOf(task.id, context)
    if (held.length === 0) {
      await store.save(task, context)
      return
    }
    const previous = await store.load(task.id, context)
    await store.save(task, context)
    const updates = taskUpdates(previous, task)
    if (updates.length > 0) deliverer.enqueue(agentId, task.id, held, updates, traceContextIn(context?.state))
    if (TERMINAL_TASK_STATES.has(task.status?.state)) await configs.dropTask(task.id, context)
  }
  return decorateTaskStore(store, { save })
}
