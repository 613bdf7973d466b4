/**
 * Where push-notification configs live (A2A 1.0 §3.1.7–3.1.10), owned exactly as tasks are: a config is kept in the
 * scope of the call that created it (tenant and owner, the SDK's resolveUserScope, as the task stores scope tasks),
 * so another caller's configs are invisible, and creating one first loads the task in the caller's own scope (the
 * SDK's request handler: an unknown task, or another caller's, is -32001).
 *
 * Each caller (its caller key, packages/a2a-converse/src/stores/caller-key.ts) holds at most `maxConfigsPerCaller` configs per agent
 * (MAX_PUSH_CONFIGS_PER_CALLER); one more is refused with CallerCapError (-32000 RESOURCE_EXHAUSTED), nothing
 * written. A config ends with its task: once the save that finishes the task has queued its last notification, the
 * task's configs are removed (the spec: a config persists until the task completes or it is deleted).
 *
 * The SDK's PushNotificationStore interface (its request handler calls it) plus what delivery needs: the configs of
 * a task in the scope of a save.
 */
import type { TaskPushNotificationConfig } from '@a2a-js/sdk'
import { resolveUserScope, type PushNotificationStore, type ServerCallContext } from '@a2a-js/sdk/server'
import { randomUUID } from 'node:crypto'
import { deepFreeze } from '../core/deep-freeze.js'
import { InvalidOptionError } from '../core/errors.js'
import { CONVERSE_EXTENSION_URI } from '../core/uri.js'
import { CallerCapError, callerKeyOf } from '../stores/caller-key.js'

export const DEFAULT_MAX_PUSH_CONFIGS_PER_CALLER = 100

/** A config as delivery uses it. */
export interface StoredPushConfig {
  config: TaskPushNotificationConfig
  /** The request that created it activated the converse extension: its notifications carry the envelope. */
  converse: boolean
}

export interface PushConfigStore extends PushNotificationStore {
  /** The configs of a task in the scope of a call (a save's context). */
  configsOf (taskId: string, context: ServerCallContext): Promise<StoredPushConfig[]>
  /** Removes every config of the task in the scope (the task finished). */
  dropTask (taskId: string, context: ServerCallContext): Promise<void>
}

/** Whether the call that creates a config activated the converse extension (requested it; the agent declares it). */
export function activatesConverse (context: ServerCallContext): boolean {
  return context.requestedExtensions?.includes(CONVERSE_EXTENSION_URI) === true
}

export function capReached (limit: number): CallerCapError {
  return new CallerCapError('MAX_PUSH_CONFIGS_PER_CALLER', limit,
    `this caller has ${limit} push notification configs (MAX_PUSH_CONFIGS_PER_CALLER): delete one before creating another`)
}

/** The caller's id for a new config: the given one, else a new UUID (the SDK store contract: assigned in place). */
export function assignId (config: TaskPushNotificationConfig): void {
  if (config.id === '' || config.id === undefined) config.id = randomUUID()
}

interface Entry extends StoredPushConfig {
  caller: string
}

function scopeOf (context: ServerCallContext): string {
  return JSON.stringify([context.tenant ?? '', resolveUserScope(context)])
}

/** One process's configs (STATE=memory, library doors): bounded per caller, lost on restart. */
export class MemoryPushConfigStore implements PushConfigStore {
  readonly maxConfigsPerCaller: number
  /** scope → taskId → configId → entry. */
  readonly #scopes = new Map<string, Map<string, Map<string, Entry>>>()
  readonly #byCaller = new Map<string, number>()

  constructor (options: { maxConfigsPerCaller?: number } = {}) {
    const max = options.maxConfigsPerCaller ?? DEFAULT_MAX_PUSH_CONFIGS_PER_CALLER
    if (!Number.isSafeInteger(max) || max < 1) throw new InvalidOptionError('maxConfigsPerCaller', 'must be a positive integer')
    this.maxConfigsPerCaller = max
  }

  /** Configs held now (tests, metrics). */
  get size (): number {
    let size = 0
    for (const n of this.#byCaller.values()) size += n
    return size
  }

  async save (taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    assignId(config)
    const scope = scopeOf(context)
    const caller = callerKeyOf(context)
    const configs = this.#scopes.get(scope)?.get(taskId)
    const previous = configs?.get(config.id)
    if (previous === undefined && (this.#byCaller.get(caller) ?? 0) >= this.maxConfigsPerCaller) throw capReached(this.maxConfigsPerCaller)
    if (previous !== undefined) this.#uncount(previous.caller)
    let tasks = this.#scopes.get(scope)
    if (tasks === undefined) this.#scopes.set(scope, tasks = new Map())
    let held = tasks.get(taskId)
    if (held === undefined) tasks.set(taskId, held = new Map())
    // Frozen: configsOf hands the config itself to delivery (no copy per save), and nothing can change it there.
    held.set(config.id, { config: deepFreeze({ ...structuredClone(config), taskId }), converse: activatesConverse(context), caller })
    this.#byCaller.set(caller, (this.#byCaller.get(caller) ?? 0) + 1)
  }

  async load (taskId: string, context: ServerCallContext): Promise<TaskPushNotificationConfig[]> {
    return [...(this.#scopes.get(scopeOf(context))?.get(taskId)?.values() ?? [])].map((entry) => structuredClone(entry.config))
  }

  async configsOf (taskId: string, context: ServerCallContext): Promise<StoredPushConfig[]> {
    return this.configsNow(taskId, context)
  }

  /** configsOf, synchronously (the memory task store queues notifications in the same step as its save). The configs are frozen. */
  configsNow (taskId: string, context: ServerCallContext): StoredPushConfig[] {
    const held = this.#scopes.get(scopeOf(context))?.get(taskId)
    if (held === undefined) return []
    return [...held.values()].map((entry) => ({ config: entry.config, converse: entry.converse }))
  }

  async delete (taskId: string, context: ServerCallContext, configId?: string): Promise<void> {
    const scope = scopeOf(context)
    const held = this.#scopes.get(scope)?.get(taskId)
    const entry = held?.get(configId ?? taskId)
    if (held === undefined || entry === undefined) return
    held.delete(entry.config.id)
    this.#uncount(entry.caller)
    if (held.size === 0) this.#forgetTask(scope, taskId)
  }

  async dropTask (taskId: string, context: ServerCallContext): Promise<void> {
    this.dropNow(taskId, context)
  }

  dropNow (taskId: string, context: ServerCallContext): void {
    const scope = scopeOf(context)
    const held = this.#scopes.get(scope)?.get(taskId)
    if (held === undefined) return
    for (const entry of held.values()) this.#uncount(entry.caller)
    this.#forgetTask(scope, taskId)
  }

  #forgetTask (scope: string, taskId: string): void {
    const tasks = this.#scopes.get(scope) as Map<string, Map<string, Entry>>
    tasks.delete(taskId)
    if (tasks.size === 0) this.#scopes.delete(scope)
  }

  #uncount (caller: string): void {
    const left = (this.#byCaller.get(caller) as number) - 1
    if (left === 0) this.#byCaller.delete(caller)
    else this.#byCaller.set(caller, left)
  }
}
