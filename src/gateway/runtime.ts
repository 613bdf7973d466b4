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
import type { TaskTurnLock } from 'a2a-converse/service'
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
  /**
   * How long a replaced or unpublished agent's own connections (a proxied agent's upstream, an envelope provider) stay
   * open after the switch, for calls in flight on them. Default RETIRE_AFTER_MS.
   */
  retireAfterMs?: number
}

/** A retired agent's connections close this long after the switch (a turn's request timeout is shorter). */
export const RETIRE_AFTER_MS = 120_000

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
  /** Per proxied agent: ready once a card was read (and verified, with cardKeys); else why not, when known. */
  readinessChecks: Record<string, () => boolean | string>
  /**
   * Builds one agent for a change at runtime (src/gateway/live-agents.ts): its executor (a knowledge index built
   * here, before anything serves it) or its upstream. Nothing is served until `switched` says the doors serve it;
   * `upstream`: the proxied agent's, whose card changes the caller follows.
   */
  build (definition: AgentDefinition): Promise<{ agent: RuntimeAgent, upstream?: UpstreamAgent, switched: () => void }>
  /**
   * An agent no longer served (unpublished): the inbox stops serving it, and what it held open (an upstream's
   * connections, its envelope provider) closes once calls in flight had time to finish.
   */
  remove (agentId: string): void
  /** Stops card refreshes and closes upstream connections (a retired agent's too). */
  close (): Promise<void>
}

/** One agent's own open resources: closed when the runtime closes, or when a change retires the agent. */
interface Held {
  upstream?: UpstreamAgent
  provider?: HttpEnvelopeProvider
  following?: RelayedPushBackend
}

/** Never rejects (a retired agent's close runs on a timer, with no one to tell). */
async function closeHeld (held: Held): Promise<void> {
  await held.following?.close()
  await Promise.allSettled([held.upstream?.close(), held.provider?.close()])
}

export async function buildAgentRuntime (options: AgentRuntimeOptions): Promise<AgentRuntime> {
  const { conversations, events } = options
  const ownership = options.upstreamOwnership ?? new MemoryUpstreamOwnershipStore()
  const factories = { ...builtInExecutors, ...options.executors }
  const taskStores = new Map<string, TaskStore>()
  const turnLocks = new Map<string, TaskTurnLock>()
  const engines = new Map<string, RoutineEngine>()
  const providers = new Map<string, HttpEnvelopeProvider>()
  const timeoutMs = options.providerTimeoutMs ?? 1000
  const retireAfterMs = options.retireAfterMs ?? RETIRE_AFTER_MS
  const fallback = options.envelopeProviderUrl === undefined ? undefined : httpEnvelopeProvider({ url: options.envelopeProviderUrl, timeoutMs })
  /** What each served agent holds open; and the retired ones', until their timer closes them. */
  const held = new Map<string, Held>()
  const retiring = new Map<Held, NodeJS.Timeout>()
  const close = async (): Promise<void> => {
    for (const timer of retiring.values()) clearTimeout(timer)
    const all = [...held.values(), ...retiring.keys()]
    held.clear()
    retiring.clear()
    await Promise.all(all.map(closeHeld))
    await fallback?.close()
  }
  /** A replaced or removed agent's resources: closed after calls in flight on them had time to finish. */
  const retire = (agentId: string): void => {
    const old = held.get(agentId)
    held.delete(agentId)
    if (old === undefined) return
    // A proxied agent's card stops refreshing at once (the doors serve the next version's, or none); its connections
    // stay for the calls still on them.
    old.upstream?.cards.close()
    if (old.upstream === undefined && old.provider === undefined) return
    const timer = setTimeout(() => {
      retiring.delete(old)
      closeHeld(old)
    }, retireAfterMs)
    timer.unref()
    retiring.set(old, timer)
  }

  /** One agent's RuntimeAgent and what it holds, registered nowhere yet. */
  async function buildOne (definition: AgentDefinition): Promise<{ agent: RuntimeAgent, own: Held, engine?: RoutineEngine }> {
    const own: Held = {}
    try {
      const provider = definition.envelopeProvider
      if (provider !== undefined) own.provider = httpEnvelopeProvider({ url: provider.url, timeoutMs: provider.timeoutMs ?? timeoutMs })
      if (definition.upstream !== undefined) return { agent: await upstreamAgent(definition, own), own }
      const { agent, engine } = await localAgent(definition)
      return { agent, own, engine }
    } catch (error) {
      await closeHeld(own)
      throw error
    }
  }

  /** Makes a built agent the one the runtime's maps (the inbox's) name. */
  function register (definition: AgentDefinition, built: { agent: RuntimeAgent, own: Held, engine?: RoutineEngine }): void {
    const { id } = definition
    retire(id)
    held.set(id, built.own)
    taskStores.set(id, built.agent.taskStore)
    if (options.turnLockFor !== undefined) turnLocks.set(id, options.turnLockFor(id))
    if (built.engine === undefined) engines.delete(id)
    else engines.set(id, built.engine)
    if (built.own.provider === undefined) providers.delete(id)
    else providers.set(id, built.own.provider)
  }

  const agents: RuntimeAgent[] = []
  try {
    for (const definition of options.definitions) {
      const built = await buildOne(definition)
      register(definition, built)
      agents.push(built.agent)
    }
  } catch (error) {
    await close()
    throw error
  }
  const upstreams = [...held.values()].flatMap((own) => own.upstream === undefined ? [] : [own.upstream])
  const readinessChecks = Object.fromEntries(upstreams.map((upstream) =>
    [`upstream:${upstream.agentId}`, () => upstream.cards.current() !== undefined || (upstream.cards.problem() ?? false)]))
  // Agents published later may bring a provider of their own: the per-agent provider then, when any exists at start.
  const envelopeProvider = providers.size > 0 || fallback !== undefined ? perAgentEnvelopeProvider(providers, fallback) : undefined
  const inbox = createInbox({ store: conversations, taskStores, events, engines, turnLocks })

  async function build (definition: AgentDefinition): Promise<{ agent: RuntimeAgent, upstream?: UpstreamAgent, switched: () => void }> {
    const built = await buildOne(definition)
    return { agent: built.agent, upstream: built.own.upstream, switched: () => { register(definition, built) } }
  }

  function remove (agentId: string): void {
    retire(agentId)
    taskStores.delete(agentId)
    turnLocks.delete(agentId)
    engines.delete(agentId)
    providers.delete(agentId)
  }

  return { agents, inbox, upstreams, envelopeProvider, readinessChecks, build, remove, close }

  async function upstreamAgent (definition: AgentDefinition, own: Held): Promise<RuntimeAgent> {
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

  async function localAgent (definition: AgentDefinition): Promise<{ agent: RuntimeAgent, engine?: RoutineEngine }> {
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
}
