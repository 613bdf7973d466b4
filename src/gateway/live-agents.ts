/**
 * Agent changes served live (docs/agents.md, "When a change is served"): a publish, replace, open or close, document
 * or unpublish written to the state store is switched onto every door of this instance before the operator API
 * replies, and onto every other instance on the same database when they hear of it: a NOTIFY on the task event hub's
 * conversation channel (the one the inbox's live list travels on; memory and embedded: this process only), and a
 * periodic check of the store's versions every AGENTS_SYNC_MS for a notification missed while a LISTEN connection was
 * down. One change of one agent at a time (a later one waits and reads the store again); different agents in parallel.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { AgentStore, StoredAgent, TaskEventHub } from 'a2a-converse/runtime'
import type { AgentDefinition } from './agent-definitions.js'

/** The conversation channel's key the changes travel on: never an agent's id (ids have no colon). */
export const AGENT_CHANGES = ':agents'
const AGENT_ID = /^[A-Za-z0-9_-]{1,128}$/

export interface LiveAgentsOptions {
  store: AgentStore
  events: TaskEventHub
  /** AGENTS_FILE's ids (the demo's): the file wins, the store's copy is never switched in. */
  fileIds: ReadonlySet<string>
  /** What this instance serves: id → store version ('file' for the file's). Kept up to date here. */
  served: Map<string, number | 'file'>
  /** A stored agent as this gateway serves it; throws why it cannot (an executor or credentials it lacks). */
  check: (agent: StoredAgent) => AgentDefinition
  /** Serves a definition on every door (a new agent, or a new version of one): built first, then switched. */
  put: (definition: AgentDefinition) => Promise<void>
  /** Stops serving an agent on every door. */
  remove: (agentId: string) => void
  /** AGENTS_SYNC_MS. */
  syncMs: number
  log: FastifyBaseLogger
}

export interface LiveAgents {
  /** Serves the store's version of one agent here (or stops serving it), then tells the other instances. Never rejects. */
  changed: (agentId: string) => Promise<void>
  /** Compares every agent's version in the store with what is served, and switches what differs. Never rejects. */
  check: () => Promise<void>
  close: () => Promise<void>
}

/** Stops serving a stored agent here (unpublished); an agent of AGENTS_FILE is never stopped. */
function stopAgent (options: LiveAgentsOptions, failed: Map<string, number>, agentId: string, why: string): void {
  const { served, log } = options
  failed.delete(agentId)
  if (typeof served.get(agentId) !== 'number') return
  options.remove(agentId)
  served.delete(agentId)
  log.info({ agentId }, `agent ${agentId} no longer served: ${why}`)
}

/**
 * Brings one agent to what the store holds: its version served (built, then switched), or stopped; a version that
 * cannot be served is remembered in `failed` and not tried again until the store holds another.
 */
async function syncAgent (options: LiveAgentsOptions, failed: Map<string, number>, agentId: string): Promise<void> {
  const { store, served, log } = options
  if (options.fileIds.has(agentId)) return
  const agent = await store.get(agentId)
  if (agent === undefined) return stopAgent(options, failed, agentId, 'unpublished')
  if (served.get(agentId) === agent.version || failed.get(agentId) === agent.version) return
  try {
    await options.put(options.check(agent))
  } catch (error) {
    failed.set(agentId, agent.version)
    log.warn({ agentId, version: agent.version }, `agent "${agentId}" version ${agent.version} in the state store is not served: ${(error as Error).message}`)
    return
  }
  failed.delete(agentId)
  served.set(agentId, agent.version)
  log.info({ agentId, version: agent.version }, `agent ${agentId} version ${agent.version} served`)
}

export function liveAgents (options: LiveAgentsOptions): LiveAgents {
  const { store, events, served, log } = options
  /** The switch in progress per agent (a later one is chained after it). */
  const running = new Map<string, Promise<void>>()
  /** Versions this instance could not serve: not tried again until the store holds another. */
  const failed = new Map<string, number>()
  let checking: Promise<void> | undefined
  let checkFailing = false

  const sync = async (agentId: string): Promise<void> => { await syncAgent(options, failed, agentId) }

  /** Runs `sync` after the one in progress for the agent; its failure (the store unreachable) is logged. */
  async function run (agentId: string): Promise<void> {
    const previous = running.get(agentId) ?? Promise.resolve()
    const next = previous.then(async () => { await sync(agentId) }).catch((error: unknown) => {
      log.warn({ agentId, err: error }, `agent ${agentId}: its change is not served yet (the periodic check tries again)`)
    })
    running.set(agentId, next)
    await next
    if (running.get(agentId) === next) running.delete(agentId)
  }

  async function changed (agentId: string): Promise<void> {
    await run(agentId)
    await events.publishConversation(AGENT_CHANGES, { agentId }).catch((error: unknown) => {
      log.warn({ agentId, err: error }, `agent ${agentId}: the other instances were not told (their periodic check will find it)`)
    })
  }

  async function checkAll (): Promise<void> {
    const heads = await store.heads()
    const inStore = new Set<string>()
    const work: Array<Promise<void>> = []
    for (const { id, version } of heads) {
      inStore.add(id)
      if (!options.fileIds.has(id) && served.get(id) !== version && failed.get(id) !== version) work.push(run(id))
    }
    for (const [id, version] of served) {
      if (typeof version === 'number' && !inStore.has(id)) work.push(run(id))
    }
    await Promise.all(work)
  }

  /** The periodic check: one at a time; a failure is logged once until a check succeeds again. */
  async function check (): Promise<void> {
    checking ??= checkAll().then(() => {
      if (checkFailing) log.info('agent changes: the state store answers again')
      checkFailing = false
    }, (error: unknown) => {
      if (!checkFailing) log.warn({ err: error }, 'agent changes: the state store cannot be read; served agents stay as they are')
      checkFailing = true
    }).finally(() => { checking = undefined })
    await checking
  }

  const unsubscribe = events.subscribeConversations(AGENT_CHANGES, (event) => {
    const agentId = event.agentId
    if (typeof agentId === 'string' && AGENT_ID.test(agentId)) run(agentId)
  })
  const timer = setInterval(() => { check() }, options.syncMs)
  timer.unref()

  async function close (): Promise<void> {
    clearInterval(timer)
    unsubscribe()
    await Promise.all([checking, ...running.values()])
  }

  return { changed, check, close }
}
