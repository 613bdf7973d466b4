/**
 * Agents kept in the state store (the gateway's operator API publishes, replaces and unpublishes them): each agent's
 * definition as a JSON object, with a version number that every change increases, and an audit of its changes (who,
 * what, when). The store does not read the definition: what a valid one is, is the caller's (the gateway's agents-file
 * rules). Memory here; PostgreSQL and the embedded database in stores/postgres/postgres-agent-store.ts, one contract.
 */
import { ConverseError, InvalidOptionError, ERROR_CODES } from '../core/errors.js'

/** An agent's definition: a JSON object, opaque to the store. */
export type AgentDocument = Record<string, unknown>

/** Who made a change and what it was, recorded with the version it made. */
export interface AgentAudit {
  /** The operator's id (the key's id, or "operator"). */
  by: string
  /** What was done: publish, replace, open, close, add-document, remove-document, unpublish. */
  change: string
  /** A short detail (the document's id, say). */
  detail?: string
}

export interface StoredAgent {
  id: string
  /** 1 for a first publish; +1 per change. Never reused for one id, even after an unpublish. */
  version: number
  definition: AgentDocument
  /** Epoch ms of the change that made this version. */
  updatedAt: number
  updatedBy: string
}

/** An agent's id and current version. */
export interface AgentHead {
  id: string
  version: number
}

/** One entry of an agent's audit: the version a change made (an unpublish makes one too). */
export interface AgentVersion {
  version: number
  at: number
  by: string
  change: string
  detail?: string
}

export interface AgentStore {
  /** Agents the store holds at most (MAX_AGENTS). */
  readonly maxAgents: number
  /** Every agent, in id order. */
  list (): Promise<StoredAgent[]>
  get (id: string): Promise<StoredAgent | undefined>
  /** Every agent's id and version, in id order: what a periodic check for changes reads (no definitions). */
  heads (): Promise<AgentHead[]>
  /** A new agent at a version above any the id had. AgentExistsError, AgentLimitError. */
  create (id: string, definition: AgentDocument, audit: AgentAudit): Promise<StoredAgent>
  /**
   * A new version of an agent; with `expectedVersion`, only over that version (AgentVersionConflictError otherwise).
   * Undefined when there is no such agent.
   */
  replace (id: string, definition: AgentDocument, expectedVersion: number | undefined, audit: AgentAudit): Promise<StoredAgent | undefined>
  /** Removes the agent (its audit stays); the version the removal recorded, undefined when there is no such agent. */
  delete (id: string, expectedVersion: number | undefined, audit: AgentAudit): Promise<number | undefined>
  /** The agent's audit, newest first (at most MAX_AGENT_VERSIONS_KEPT); empty for an id never published. */
  versions (id: string): Promise<AgentVersion[]>
  close (): Promise<void>
}

/** Audit entries kept per agent id (the oldest go first). */
export const MAX_AGENT_VERSIONS_KEPT = 100
export const DEFAULT_MAX_AGENTS = 1000

export class AgentExistsError extends ConverseError {
  constructor (id: string) {
    super(ERROR_CODES.AGENT_EXISTS, `agent "${id}" is already published`)
  }
}

export class AgentLimitError extends ConverseError {
  constructor (max: number) {
    super(ERROR_CODES.AGENT_LIMIT, `the store holds the most agents it may (${max}); unpublish one first`)
  }
}

export class AgentVersionConflictError extends ConverseError {
  readonly current: number
  constructor (id: string, current: number) {
    super(ERROR_CODES.AGENT_VERSION, `agent "${id}" is at version ${current}`)
    this.current = current
  }
}

export function maxAgentsOption (value: number | undefined): number {
  if (value === undefined) return DEFAULT_MAX_AGENTS
  if (!Number.isInteger(value) || value < 1) throw new InvalidOptionError('maxAgents', 'must be a positive integer')
  return value
}

export interface MemoryAgentStoreOptions {
  /** Default 1000. */
  maxAgents?: number
  /** The clock (epoch ms). Default Date.now. */
  now?: () => number
}

/**
 * This process's agents. Audits of unpublished ids are kept for as many ids as `maxAgents` (the oldest unpublished
 * forgotten first; such an id published again starts at version 1).
 */
export class MemoryAgentStore implements AgentStore {
  readonly maxAgents: number
  readonly #agents = new Map<string, StoredAgent>()
  /** Per id, newest last; an unpublished id's stays (insertion order: the order of unpublishing). */
  readonly #audits = new Map<string, AgentVersion[]>()
  readonly #unpublished = new Set<string>()
  readonly #now: () => number

  constructor (options: MemoryAgentStoreOptions = {}) {
    this.maxAgents = maxAgentsOption(options.maxAgents)
    this.#now = options.now ?? Date.now
  }

  async list (): Promise<StoredAgent[]> {
    return this.#sorted().map(copy)
  }

  async heads (): Promise<AgentHead[]> {
    return this.#sorted().map(({ id, version }) => ({ id, version }))
  }

  async get (id: string): Promise<StoredAgent | undefined> {
    const agent = this.#agents.get(id)
    return agent === undefined ? undefined : copy(agent)
  }

  async create (id: string, definition: AgentDocument, audit: AgentAudit): Promise<StoredAgent> {
    if (this.#agents.has(id)) throw new AgentExistsError(id)
    if (this.#agents.size >= this.maxAgents) throw new AgentLimitError(this.maxAgents)
    this.#unpublished.delete(id)
    return this.#write(id, definition, audit)
  }

  async replace (id: string, definition: AgentDocument, expectedVersion: number | undefined, audit: AgentAudit): Promise<StoredAgent | undefined> {
    const current = this.#agents.get(id)
    if (current === undefined) return undefined
    if (expectedVersion !== undefined && expectedVersion !== current.version) throw new AgentVersionConflictError(id, current.version)
    return this.#write(id, definition, audit)
  }

  async delete (id: string, expectedVersion: number | undefined, audit: AgentAudit): Promise<number | undefined> {
    const current = this.#agents.get(id)
    if (current === undefined) return undefined
    if (expectedVersion !== undefined && expectedVersion !== current.version) throw new AgentVersionConflictError(id, current.version)
    this.#agents.delete(id)
    const version = this.#record(id, audit).version
    this.#unpublished.add(id)
    // The oldest unpublished ids' audits go past the bound.
    for (const old of this.#unpublished) {
      if (this.#unpublished.size <= this.maxAgents) break
      this.#unpublished.delete(old)
      this.#audits.delete(old)
    }
    return version
  }

  async versions (id: string): Promise<AgentVersion[]> {
    return (this.#audits.get(id) ?? []).map((entry) => ({ ...entry })).reverse()
  }

  async close (): Promise<void> {}

  #sorted (): StoredAgent[] {
    return [...this.#agents.values()].sort((a, b) => a.id < b.id ? -1 : 1)
  }

  #write (id: string, definition: AgentDocument, audit: AgentAudit): StoredAgent {
    const entry = this.#record(id, audit)
    // A copy through JSON: what PostgreSQL would give back, and nothing the caller keeps a hold on.
    const agent: StoredAgent = { id, version: entry.version, definition: JSON.parse(JSON.stringify(definition)), updatedAt: entry.at, updatedBy: audit.by }
    this.#agents.set(id, agent)
    return copy(agent)
  }

  #record (id: string, audit: AgentAudit): AgentVersion {
    const audits = this.#audits.get(id) ?? []
    const entry: AgentVersion = {
      version: (audits.at(-1)?.version ?? 0) + 1,
      at: this.#now(),
      by: audit.by,
      change: audit.change,
      ...(audit.detail !== undefined ? { detail: audit.detail } : {})
    }
    audits.push(entry)
    if (audits.length > MAX_AGENT_VERSIONS_KEPT) audits.splice(0, audits.length - MAX_AGENT_VERSIONS_KEPT)
    this.#audits.set(id, audits)
    return entry
  }
}

function copy (agent: StoredAgent): StoredAgent {
  return { ...agent, definition: structuredClone(agent.definition) }
}
