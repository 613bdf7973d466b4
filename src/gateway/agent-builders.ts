/**
 * One agent of the runtime built from its definition, registered nowhere yet: a local agent (its executor over the
 * conversation store, its task store with push) or a proxied one (its upstream, the gateway's push relay, callers kept
 * apart, human takeover). runtime.ts keeps which agents are served and what they hold open.
 */
import type { TaskStore } from '@a2a-js/sdk/server'
import type { A2ABackend, HttpEnvelopeProvider, ServiceLogger, UpstreamAgentOptions } from 'a2a-converse/service'
import type { AgentCardInput, RoutineDeclaration } from 'a2a-converse'
import type { ConversationStore, RoutineEngine, TaskEventHub, UpstreamOwnershipStore } from 'a2a-converse/runtime'
import { ownedUpstreamBackend, relayedPushBackend, startUpstreamAgent, takeoverBackend, type RelayedPushBackend, type UpstreamAgent } from 'a2a-converse/service'
import type { AgentPush } from 'a2a-converse/push'
import type { AgentDefinition } from './agent-definitions.js'
import type { ExecutorFactory } from './executors.js'

/**
 * One agent as the doors take it: a declaration (id, card, routines) and what answers it (an executor and its task
 * store, or an upstream agent's backend).
 */
export interface RuntimeAgent {
  id: string
  card: AgentCardInput
  routines: RoutineDeclaration[] | undefined
  executor?: Awaited<ReturnType<ExecutorFactory>>
  backend?: A2ABackend
  taskStore: TaskStore
  push?: AgentPush
}

/** What building an agent takes from the runtime's options. */
export interface AgentBuildOptions {
  /** The task store of an agent. */
  taskStoreFor (agentId: string): TaskStore
  /** Where proxied agents log (card reads, upstream failures). */
  log?: ServiceLogger
  /** Characters of a message's text the executors read (MAX_READ_CHARS), handed to every executor factory. */
  maxReadChars?: number
  /**
   * Human takeover for proxied agents: their turns recorded in the conversation store, held while a person owns
   * the conversation. Default true; the gateway turns it off with the operator API (nothing could take over).
   */
  proxyTakeover?: boolean
  /**
   * Push notifications of a local agent: its config store and URL policy, and its task store reporting each save's
   * updates (the gateway's createPushNotifications().forAgent). Without: the cards say `pushNotifications: false`.
   */
  push?: (agentId: string, taskStore: TaskStore) => { push: AgentPush, taskStore: TaskStore }
  /**
   * Push notifications of a proxied agent's upstream tasks (relayed-push-backend.ts): the store of the copies of its
   * configured tasks, reporting each save's updates, and the configs and URL policy (`held`: the push of its held
   * turns, whose config store a memory setup shares). With this and `push`, a proxied agent's card says
   * `pushNotifications: true` (the gateway delivers); otherwise false.
   */
  upstreamPush?: (agentId: string, held: AgentPush) => { push: AgentPush, taskStore: TaskStore }
  /** What a proxied agent with `upstream.identity.mode: assertion` signs with (SIGNING_KEY, PUBLIC_URL as `iss`). */
  assertions?: UpstreamAgentOptions['assertions']
}

export interface BuildContext {
  options: AgentBuildOptions
  conversations: ConversationStore
  events: TaskEventHub
  ownership: UpstreamOwnershipStore
  /** Executor factories by name. */
  factories: Record<string, ExecutorFactory>
}

/** One agent's own open resources: closed when the runtime closes, or when a change retires the agent. */
export interface Held {
  upstream?: UpstreamAgent
  provider?: HttpEnvelopeProvider
  following?: RelayedPushBackend
}

/** Never rejects (a retired agent's close runs on a timer, with no one to tell). */
export async function closeHeld (held: Held): Promise<void> {
  await held.following?.close()
  await Promise.allSettled([held.upstream?.close(), held.provider?.close()])
}

export async function upstreamAgent (context: BuildContext, definition: AgentDefinition, own: Held): Promise<RuntimeAgent> {
  const { options, conversations, events, ownership } = context
  const stored = options.taskStoreFor(definition.id)
  // The held turns' tasks report to webhooks as local tasks do; upstream tasks through their copies.
  const pushed = options.push?.(definition.id, stored)
  const taskStore = pushed?.taskStore ?? stored
  const copies = pushed === undefined ? undefined : options.upstreamPush?.(definition.id, pushed.push)
  const upstream = own.upstream = await startUpstreamAgent({
    agentId: definition.id,
    upstream: definition.upstream as NonNullable<AgentDefinition['upstream']>,
    overrides: { name: definition.name, description: definition.description, version: definition.version, pushNotifications: copies !== undefined },
    log: options.log,
    assertions: options.assertions
  })
  // The gateway delivers push notifications from what it relays (configs never go upstream).
  let relayed: A2ABackend = upstream.backend
  if (copies !== undefined) {
    const mode = definition.upstream?.identity?.mode
    const pushing = own.following = relayedPushBackend({
      agentId: definition.id,
      upstream: upstream.backend,
      copies: copies.taskStore,
      push: copies.push,
      // The follow of a configured task carries the caller's own token where the upstream takes it.
      keepsCallerToken: mode === 'passthrough' || mode === 'exchange',
      log: options.log
    })
    relayed = pushing
  }
  // Callers kept apart: every task and context the upstream returns is recorded as its caller's.
  const owned = ownedUpstreamBackend({ agentId: definition.id, upstream: relayed, ownership })
  return {
    id: definition.id,
    // Until the upstream's card is read: what the agents file says (the card is replaced once read).
    card: upstream.initialCard?.served ?? {
      name: definition.name ?? definition.id,
      description: definition.description ?? '',
      capabilities: { streaming: true, pushNotifications: copies !== undefined }
    },
    routines: definition.routines,
    backend: options.proxyTakeover === false
      ? owned
      : takeoverBackend({ agentId: definition.id, upstream: owned, conversations, taskStore, events, push: copies === undefined ? undefined : (pushed as NonNullable<typeof pushed>).push }),
    taskStore
  }
}

export async function localAgent (context: BuildContext, definition: AgentDefinition): Promise<{ agent: RuntimeAgent, engine?: RoutineEngine }> {
  const { options, conversations, events, factories } = context
  const name = definition.executor ?? 'conversation'
  const factory = factories[name]
  if (factory === undefined) {
    throw new Error(`agent "${definition.id}": unknown executor "${name}" (known: ${Object.keys(factories).join(', ')})`)
  }
  const stored = options.taskStoreFor(definition.id)
  const wired = options.push?.(definition.id, stored)
  const taskStore = wired?.taskStore ?? stored
  const executor = await factory(definition, { conversations, taskStore, events, maxReadChars: options.maxReadChars })
  const agent: RuntimeAgent = {
    id: definition.id,
    card: {
      // Required by the agents file's schema for agents without an upstream.
      name: definition.name as string,
      description: definition.description as string,
      version: definition.version ?? '1.0.0',
      capabilities: { streaming: true, pushNotifications: wired !== undefined }
    },
    routines: definition.routines,
    executor,
    taskStore,
    push: wired?.push
  }
  return { agent, engine: executor.engine }
}
