/**
 * Upstream ownership records in this process's memory, bounded per agent: at most `maxTasks` task records and
 * `maxContexts` context records each; past a bound the record made first goes (oldest first). A forgotten task is
 * unknown to everyone (-32001), as a task the memory task store forgot; a forgotten context is free to be
 * claimed again (the next caller naming it owns it).
 */
import {
  assertListOptions, type OwnedTaskListOptions, type OwnedTaskPage, type UpstreamOwnershipStore
} from './upstream-ownership-store.js'
import { integerOption } from '../core/integer-option.js'

export interface MemoryUpstreamOwnershipStoreOptions {
  /** Task records kept per agent. Default 10 000 (MEMORY_MAX_TASKS in the gateway). */
  maxTasks?: number
  /** Context records kept per agent. Default 10 000 (MEMORY_MAX_CONVERSATIONS in the gateway). */
  maxContexts?: number
}

export const DEFAULT_MAX_OWNED = 10_000

interface TaskRecord {
  owner: string
  contextId: string | undefined
  /** Increases with every record: the page position. */
  seq: number
}

interface AgentRecords {
  /** Oldest first (a Map keeps insertion order). */
  tasks: Map<string, TaskRecord>
  contexts: Map<string, string>
}

export class MemoryUpstreamOwnershipStore implements UpstreamOwnershipStore {
  readonly maxTasks: number
  readonly maxContexts: number
  readonly #agents = new Map<string, AgentRecords>()
  #seq = 0

  constructor (options: MemoryUpstreamOwnershipStoreOptions = {}) {
    this.maxTasks = integerOption('maxTasks', options.maxTasks, DEFAULT_MAX_OWNED)
    this.maxContexts = integerOption('maxContexts', options.maxContexts, DEFAULT_MAX_OWNED)
  }

  #records (agentId: string): AgentRecords {
    let records = this.#agents.get(agentId)
    if (records === undefined) {
      records = { tasks: new Map(), contexts: new Map() }
      this.#agents.set(agentId, records)
    }
    return records
  }

  async recordTask (agentId: string, owner: string, taskId: string, contextId: string | undefined): Promise<void> {
    const records = this.#records(agentId)
    if (contextId !== undefined) this.#claim(records, owner, contextId)
    if (records.tasks.has(taskId)) return
    records.tasks.set(taskId, { owner, contextId, seq: ++this.#seq })
    if (records.tasks.size > this.maxTasks) records.tasks.delete(records.tasks.keys().next().value as string)
  }

  async claimContext (agentId: string, owner: string, contextId: string): Promise<string> {
    return this.#claim(this.#records(agentId), owner, contextId)
  }

  #claim (records: AgentRecords, owner: string, contextId: string): string {
    const recorded = records.contexts.get(contextId)
    if (recorded !== undefined) return recorded
    records.contexts.set(contextId, owner)
    if (records.contexts.size > this.maxContexts) records.contexts.delete(records.contexts.keys().next().value as string)
    return owner
  }

  async taskOwner (agentId: string, taskId: string): Promise<string | undefined> {
    return this.#agents.get(agentId)?.tasks.get(taskId)?.owner
  }

  async listTasks (agentId: string, owner: string, options: OwnedTaskListOptions): Promise<OwnedTaskPage> {
    assertListOptions(options)
    const { contextId, pageSize, after } = options
    const matching: Array<[string, TaskRecord]> = []
    // At most maxTasks records per agent: one pass, newest first.
    for (const entry of this.#agents.get(agentId)?.tasks ?? []) {
      if (entry[1].owner === owner && (contextId === undefined || entry[1].contextId === contextId)) matching.push(entry)
    }
    matching.reverse()
    const start = after === undefined ? 0 : matching.findIndex(([, record]) => record.seq < after)
    const page = start === -1 ? [] : matching.slice(start, start + pageSize)
    const more = start !== -1 && start + pageSize < matching.length
    return { taskIds: page.map(([taskId]) => taskId), totalSize: matching.length, ...(more ? { next: page[page.length - 1][1].seq } : {}) }
  }

  async close (): Promise<void> {
    this.#agents.clear()
  }
}
