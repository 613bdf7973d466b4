/**
 * The gateway's push notifications (docs/push.md): the deliverer, and per agent its task store, where its configs
 * live and what delivers them (the state's outbox on PostgreSQL and embedded, else this process), and a proxied
 * agent's copies of its upstream tasks. Each per agent id while it is served (per-agent.ts): a new version of an
 * agent keeps its tasks and push configs.
 */
import type { FastifyInstance } from 'fastify'
import type { TaskStore } from '@a2a-js/sdk/server'
import { CONVERSE_EXTENSION_URI } from 'a2a-converse'
import { createPushNotifications, type AgentPush } from 'a2a-converse/push'
import { tracedTaskStore, withSaveSignals } from 'a2a-converse/runtime'
import type { GatewayConfig } from './config.js'
import { perAgent, type PerAgent } from './per-agent.js'
import type { GatewayState } from './state.js'

/** An agent's push: its config store and policy, and its task store reporting to the deliverer. */
type AgentTaskPush = ReturnType<ReturnType<typeof createPushNotifications>['forAgent']>

export interface GatewayPush {
  push: ReturnType<typeof createPushNotifications>
  taskStoreFor: PerAgent<[], TaskStore>
  agentPush: PerAgent<[TaskStore], AgentTaskPush>
  upstreamPush: PerAgent<[AgentPush], AgentTaskPush>
}

export function gatewayPush (app: FastifyInstance, config: GatewayConfig, state: GatewayState, taskStores: Record<string, TaskStore> | undefined): GatewayPush {
  // Webhook delivery (docs/push.md): a notification carries the converse envelope when the request that created its
  // config activated the extension, and none otherwise, as a reply to that request would.
  const push = createPushNotifications({
    allowedHosts: config.push.allowedHosts,
    allowHttp: config.push.allowHttp,
    maxConfigsPerCaller: config.push.maxConfigsPerCaller,
    retry: config.push,
    log: app.log,
    present: async (agentId, event, converse) => await app.converse.extension.transform('SendStreamingMessage', event, {
      agentId, negotiated: { activated: converse ? [CONVERSE_EXTENSION_URI] : [], active: converse }, log: app.log
    }) as Record<string, unknown>
  })
  app.addHook('onClose', async () => { await push.close() })
  // Per agent id while served (per-agent.ts): a new version of an agent keeps its tasks and push configs.
  // A given store without save signals gets them for the saves made here (the supersede close waits on them).
  const taskStoreFor = perAgent((agentId) => {
    const given = taskStores?.[agentId]
    // Loads and saves are spans of their own (no-ops without an OpenTelemetry SDK).
    return tracedTaskStore(given === undefined ? state.taskStoreFor(agentId) : withSaveSignals(given), agentId)
  })
  // On PostgreSQL and embedded, the state's own task stores record notifications in an outbox (the save's
  // transaction); any other store reports to this process's deliverer.
  const agentPush = perAgent((agentId, taskStore: TaskStore) => state.pushConfigsFor !== undefined && taskStores?.[agentId] === undefined
    ? { push: { configs: state.pushConfigsFor(agentId), policy: push.policy }, taskStore }
    : push.forAgent(agentId, taskStore))
  // A proxied agent's upstream tasks: copies of the configured ones (relayed-push-backend.ts), their configs in the
  // copies' scope on PostgreSQL and embedded (the outbox), else in the held turns' config store (one cap).
  const upstreamPush = perAgent((agentId, held: AgentPush) => {
    const copies = state.upstreamCopiesFor(agentId)
    return copies.configs !== undefined
      ? { push: { configs: copies.configs, policy: push.policy }, taskStore: copies.taskStore }
      : push.forAgent(agentId, copies.taskStore, held.configs)
  })
  return { push, taskStoreFor, agentPush, upstreamPush }
}
