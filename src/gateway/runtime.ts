/**
 * The conversation runtime built from agent definitions, framework-free: per agent its card, routines, executor
 * and task store, and the human inbox over all of them. The Fastify gateway (app.ts) and the Express example
 * (examples/express-gateway.ts) mount the same runtime on their doors.
 */
import type { TaskStore } from '@a2a-js/sdk/server'
import type { EnvelopeProvider } from 'a2a-converse'
import { httpEnvelopeProvider, perAgentEnvelopeProvider, type HttpEnvelopeProvider } from 'a2a-converse/service'
import type { TaskEventHub } from 'a2a-converse/runtime'
import { createInbox, type Inbox } from 'a2a-converse/runtime'
import type { RoutineEngine } from 'a2a-converse/runtime'
import type { ConversationStore } from 'a2a-converse/runtime'
import { MemoryUpstreamOwnershipStore } from 'a2a-converse/runtime'
import type { UpstreamOwnershipStore } from 'a2a-converse/runtime'
import type { TaskTurnLock } from 'a2a-converse/service'
import type { UpstreamAgent } from 'a2a-converse/service'
import type { AgentDefinition } from './agent-definitions.js'
import { closeHeld, localAgent, upstreamAgent, type AgentBuildOptions, type BuildContext, type Held, type RuntimeAgent } from './agent-builders.js'
import { builtInExecutors, type ExecutorFactory } from './executors.js'

export type { RuntimeAgent } from './agent-builders.js'

export interface AgentRuntimeOptions extends AgentBuildOptions {
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
  /** The task turn lock of each agent (its A2A endpoint's): the inbox's task writes take it too. */
  turnLockFor?: (agentId: string) => TaskTurnLock
  /** An httpEnvelopeProvider for every agent without one of its own (ENVELOPE_PROVIDER_URL). */
  envelopeProviderUrl?: string
  /** Default timeout of the HTTP envelope providers (PROVIDER_TIMEOUT_MS). Default 1000. */
  providerTimeoutMs?: number
  /**
   * How long a replaced or unpublished agent's own connections (a proxied agent's upstream, an envelope provider) stay
   * open after the switch, for calls in flight on them. Default RETIRE_AFTER_MS.
   */
  retireAfterMs?: number
}

/** A retired agent's connections close this long after the switch (a turn's request timeout is shorter). */
export const RETIRE_AFTER_MS = 120_000

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

/** What each served agent holds open (its upstream, its envelope provider); and the retired ones', until their timer closes them. */
class Holdings {
  readonly #held = new Map<string, Held>()
  readonly #retiring = new Map<Held, NodeJS.Timeout>()

  constructor (readonly retireAfterMs: number) {}

  set (agentId: string, own: Held): void {
    this.#held.set(agentId, own)
  }

  upstreams (): UpstreamAgent[] {
    return [...this.#held.values()].flatMap((own) => own.upstream === undefined ? [] : [own.upstream])
  }

  /** A replaced or removed agent's resources: closed after calls in flight on them had time to finish. */
  retire (agentId: string): void {
    const old = this.#held.get(agentId)
    this.#held.delete(agentId)
    if (old === undefined) return
    // A proxied agent's card stops refreshing at once (the doors serve the next version's, or none); its connections
    // stay for the calls still on them.
    old.upstream?.cards.close()
    if (old.upstream === undefined && old.provider === undefined) return
    const timer = setTimeout(() => {
      this.#retiring.delete(old)
      closeHeld(old)
    }, this.retireAfterMs)
    timer.unref()
    this.#retiring.set(old, timer)
  }

  async close (): Promise<void> {
    for (const timer of this.#retiring.values()) clearTimeout(timer)
    const all = [...this.#held.values(), ...this.#retiring.keys()]
    this.#held.clear()
    this.#retiring.clear()
    await Promise.all(all.map(closeHeld))
  }
}

export async function buildAgentRuntime (options: AgentRuntimeOptions): Promise<AgentRuntime> {
  const { conversations, events } = options
  const ownership = options.upstreamOwnership ?? new MemoryUpstreamOwnershipStore()
  const context: BuildContext = { options, conversations, events, ownership, factories: { ...builtInExecutors, ...options.executors } }
  const taskStores = new Map<string, TaskStore>()
  const turnLocks = new Map<string, TaskTurnLock>()
  const engines = new Map<string, RoutineEngine>()
  const providers = new Map<string, HttpEnvelopeProvider>()
  const timeoutMs = options.providerTimeoutMs ?? 1000
  const retireAfterMs = options.retireAfterMs ?? RETIRE_AFTER_MS
  const fallback = options.envelopeProviderUrl === undefined ? undefined : httpEnvelopeProvider({ url: options.envelopeProviderUrl, timeoutMs })
  const holdings = new Holdings(retireAfterMs)
  const close = async (): Promise<void> => {
    await holdings.close()
    await fallback?.close()
  }
  const retire = (agentId: string): void => { holdings.retire(agentId) }

  /** One agent's RuntimeAgent and what it holds, registered nowhere yet. */
  async function buildOne (definition: AgentDefinition): Promise<{ agent: RuntimeAgent, own: Held, engine?: RoutineEngine }> {
    const own: Held = {}
    try {
      const provider = definition.envelopeProvider
      if (provider !== undefined) own.provider = httpEnvelopeProvider({ url: provider.url, timeoutMs: provider.timeoutMs ?? timeoutMs })
      if (definition.upstream !== undefined) return { agent: await upstreamAgent(context, definition, own), own }
      const { agent, engine } = await localAgent(context, definition)
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
    holdings.set(id, built.own)
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
  const upstreams = holdings.upstreams()
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
}
