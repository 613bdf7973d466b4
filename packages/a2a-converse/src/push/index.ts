/**
 * Push notifications assembled: one URL policy, one webhook poster and one deliverer for a gateway (or an
 * endpoint), and per agent a config store and the task store that reports to the deliverer.
 */
import { InMemoryTaskStore, type TaskStore } from '@a2a-js/sdk/server'
import { MemoryPushConfigStore, type PushConfigStore } from './push-config-store.js'
import { PushDeliverer, type PresentNotification, type PushLogger } from './push-deliverer.js'
import { withPushNotifications, type AgentPush } from './push-notifications.js'
import { DEFAULT_RETRY_SETTINGS, type RetrySettings } from './retry-schedule.js'
import { PushUrlPolicy, type PushUrlPolicyOptions } from './url-guard.js'
import { webhookPoster, type WebhookPoster } from './webhook-post.js'

export interface PushNotificationsOptions extends PushUrlPolicyOptions {
  retry?: Partial<RetrySettings>
  /** Shapes each notification for its config (the gateway: the converse envelope, or none). Default: as stored. */
  present?: PresentNotification
  log?: PushLogger
  /** MAX_PUSH_CONFIGS_PER_CALLER for the memory config stores made here. */
  maxConfigsPerCaller?: number
}

export interface PushNotifications {
  readonly policy: PushUrlPolicy
  readonly deliverer: PushDeliverer
  /** What another deliverer (the PostgreSQL outbox) posts with: the same poster, retry settings and presentation. */
  readonly delivery: { poster: WebhookPoster, retry: RetrySettings, present?: PresentNotification, log?: PushLogger }
  /**
   * An agent's push: its config store (default: a new MemoryPushConfigStore) and its task store reporting each save's
   * updates to the deliverer (default store: a new InMemoryTaskStore).
   */
  forAgent (agentId: string, taskStore?: TaskStore, configs?: PushConfigStore): { push: AgentPush, taskStore: TaskStore }
  close (): Promise<void>
}

export function createPushNotifications (options: PushNotificationsOptions = {}): PushNotifications {
  const policy = new PushUrlPolicy(options)
  const retry = { ...DEFAULT_RETRY_SETTINGS, ...options.retry }
  const delivery = { poster: webhookPoster(policy, { timeoutMs: retry.timeoutMs }), retry, present: options.present, log: options.log }
  const deliverer = new PushDeliverer(delivery)
  return {
    policy,
    deliverer,
    delivery,
    forAgent (agentId, taskStore = new InMemoryTaskStore(), configs = new MemoryPushConfigStore({ maxConfigsPerCaller: options.maxConfigsPerCaller })) {
      return { push: { configs, policy }, taskStore: withPushNotifications(taskStore, agentId, configs, deliverer) }
    },
    async close () {
      await deliverer.close()
    }
  }
}

export { MemoryPushConfigStore, type PushConfigStore, type StoredPushConfig } from './push-config-store.js'
export { PushUrlPolicy } from './url-guard.js'
export type { AgentPush } from './push-notifications.js'
export { DELIVERY_ID_HEADER, TOKEN_HEADER } from './webhook-post.js'
