/**
 * The conversation runtime built from agent definitions, framework-free: per agent its card, routines, executor
 * and task store, and the human inbox over all of them. The Fastify gateway (app.ts) and the Express example
 * (examples/express-gateway.ts) mount the same runtime on their doors.
 */
import type { TaskStore } from '@a2a-js/sdk/server'
import type { A2ABackend, ServiceLogger } from 'a2a-converse/service'
import type { AgentCardInput } from 'a2a-converse'
import type { EnvelopeProvider } from 'a2a-converse'
import { httpEnvelopeProvider, perAgentEnvelopeProvider, type HttpEnvelopeProvider } from 'a2a-converse/service'
import type { RoutineDeclaration } from 'a2a-converse'
import type { TaskEventHub } from 'a2a-converse/runtime'
import { createInbox, type Inbox } from 'a2a-converse/runtime'
import type { RoutineEngine } from 'a2a-converse/runtime'
import type { ConversationStore } from 'a2a-converse/runtime'
import { MemoryUpstreamOwnershipStore } from 'a2a-converse/runtime'
import type { UpstreamOwnershipStore } from 'a2a-converse/runtime'
import type { TaskTurnLock } from 'a2a-converse/runtime'
import { ownedUpstreamBackend } from 'a2a-converse/service'
import { takeoverBackend } from 'a2a-converse/service'
import { relayedPushBackend, type RelayedPushBackend } from 'a2a-converse/service'
import { startUpstreamAgent, type UpstreamAgent, type UpstreamAgentOptions } from 'a2a-converse/service'
import type { AgentDefinition } from './agent-definitions.js'
import { builtInExecutors, type ExecutorFactory } from './executors.js'
import type { AgentPush } from 'a2a-converse/push'

export interface AgentRuntimeOptions {
  definitions: AgentDefinition[]
  /** Executor factories by name, merged over the built-in ones ("conversation", "knowledge"). */
  executors?: Record<string, ExecutorFactory>
  conversations: ConversationStore
  events: TaskEventHub
  /**
   * Who owns each proxied agent's upstream tasks and contexts (the gateway state's: shared by instances on
   * PostgreSQL). Default: a MemoryUpstreamOwnershipStore of this runtime.
   */
  upstreamOwnership?: UpstreamOwnershipStore
  /** The task store of an agent. */
  /** The task turn lock of each agent (its A2A endpoint's): the inbox's task writes take it too. */
  turnLockFor?: (agentId: string) => TaskTurnLock
  taskStoreFor (agentId: string): TaskStore
  /** Where proxied agents log (card reads, upstream failures). */
  log?: ServiceLogger
  /** Characters of a message's text the executors read (MAX_READ_CHARS), handed to every executor factory. */
  maxReadChars?: number
  /** An httpEnvelopeProvider for every agent without one of its own (ENVELOPE_PROVIDER_URL). */
  envelopeProviderUrl?: string
  /** Default timeout of the HTTP envelope providers (PROVIDER_TIMEOUT_MS). Default 1000. */
  providerTimeoutMs?: number
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

export interface AgentRuntime {
  agents: RuntimeAgent[]
  /** Human takeover over these agents' conversations (the operator API's). */
  inbox: Inbox
  /** The proxied agents (their cards change after start: see UpstreamAgent.cards). */
  upstreams: UpstreamAgent[]
  /**
   * Where envelopes come from when HTTP envelope providers are configured: what an agent attached, else its
   * provider. Undefined without any (the extension's default: what the agent attached).
   */
  envelopeProvider?: EnvelopeProvider
  /** Readiness per proxied agent: ready once its card was read. */
  /** Per proxied agent: ready once a card was read (and verified, with cardKeys); else why not, when known. */
  readinessChecks: Record<string, () => boolean | string>
  /** Stops card refreshes and closes upstream connections. */
  close (): Promise<void>
}

export async function buildAgentRuntime (options: AgentRuntimeOptions): Promise<AgentRuntime> {
  const { conversations, events } = options
  const ownership = options.upstreamOwnership ?? new MemoryUpstreamOwnershipStore()
  const factories = { ...builtInExecutors, ...options.executors }
  const taskStores = new Map<string, TaskStore>()
  const turnLocks = new Map<string, TaskTurnLock>()
  if (options.turnLockFor !== undefined) for (const definition of options.definitions) turnLocks.set(definition.id, options.turnLockFor(definition.id))
  const engines = new Map<string, RoutineEngine>()
  const agents: RuntimeAgent[] = []
  const upstreams: UpstreamAgent[] = []
  const providers = new Map<string, HttpEnvelopeProvider>()
  const timeoutMs = options.providerTimeoutMs ?? 1000
  const fallback = options.envelopeProviderUrl === undefined ? undefined : httpEnvelopeProvider({ url: options.envelopeProviderUrl, timeoutMs })
  // Proxied agents following configured tasks upstream: stopped before the upstream connections close.
  const following: RelayedPushBackend[] = []
  const close = async (): Promise<void> => {
    await Promise.all(following.map(async (backend) => { await backend.close() }))
    await Promise.all([...upstreams, ...providers.values(), ...(fallback === undefined ? [] : [fallback])].map((open) => open.close()))
  }
  try {
    for (const definition of options.definitions) {
      const provider = definition.envelopeProvider
      if (provider !== undefined) {
        providers.set(definition.id, httpEnvelopeProvider({ url: provider.url, timeoutMs: provider.timeoutMs ?? timeoutMs }))
      }
      if (definition.upstream !== undefined) {
        const stored = options.taskStoreFor(definition.id)
        // The held turns' tasks report to webhooks as local tasks do; upstream tasks through their copies.
        const held = options.push?.(definition.id, stored)
        const taskStore = held?.taskStore ?? stored
        taskStores.set(definition.id, taskStore)
        const copies = held === undefined ? undefined : options.upstreamPush?.(definition.id, held.push)
        const upstream = await startUpstreamAgent({
          agentId: definition.id,
          upstream: definition.upstream,
          overrides: { name: definition.name, description: definition.description, version: definition.version, pushNotifications: copies !== undefined },
          log: options.log,
          assertions: options.assertions
        })
        upstreams.push(upstream)
        // The gateway delivers push notifications from what it relays (configs never go upstream).
        let relayed: A2ABackend = upstream.backend
        if (copies !== undefined) {
          const mode = definition.upstream.identity?.mode
          const pushing = relayedPushBackend({
            agentId: definition.id,
            upstream: upstream.backend,
            copies: copies.taskStore,
            push: copies.push,
            // The follow of a configured task carries the caller's own token where the upstream takes it.
            keepsCallerToken: mode === 'passthrough' || mode === 'exchange',
            log: options.log
          })
          following.push(pushing)
          relayed = pushing
        }
        // Callers kept apart: every task and context the upstream returns is recorded as its caller's.
        const owned = ownedUpstreamBackend({ agentId: definition.id, upstream: relayed, ownership })
        agents.push({
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
            : takeoverBackend({ agentId: definition.id, upstream: owned, conversations, taskStore, events, push: copies === undefined ? undefined : (held as NonNullable<typeof held>).push }),
          taskStore
        })
        continue
      }
      agents.push(await localAgent(definition))
    }
  } catch (error) {
    await close()
    throw error
  }
  const readinessChecks = Object.fromEntries(upstreams.map((upstream) =>
    [`upstream:${upstream.agentId}`, () => upstream.cards.current() !== undefined || (upstream.cards.problem() ?? false)]))
  const envelopeProvider = providers.size > 0 || fallback !== undefined ? perAgentEnvelopeProvider(providers, fallback) : undefined
  return { agents, inbox: createInbox({ store: conversations, taskStores, events, engines, turnLocks }), upstreams, envelopeProvider, readinessChecks, close }

  async function localAgent (definition: AgentDefinition): Promise<RuntimeAgent> {
    const name = definition.executor ?? 'conversation'
    const factory = factories[name]
    if (factory === undefined) {
      throw new Error(`agent "${definition.id}": unknown executor "${name}" (known: ${Object.keys(factories).join(', ')})`)
    }
    const stored = options.taskStoreFor(definition.id)
    const wired = options.push?.(definition.id, stored)
    const taskStore = wired?.taskStore ?? stored
    taskStores.set(definition.id, taskStore)
    const executor = await factory(definition, { conversations, taskStore, events, maxReadChars: options.maxReadChars })
    if (executor.engine !== undefined) engines.set(definition.id, executor.engine)
    return {
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
  }
}
