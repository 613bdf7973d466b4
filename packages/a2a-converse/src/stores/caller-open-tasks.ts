/**
 * Per caller (caller key), the open tasks a BoundedMemoryTaskStore holds and the new tasks it reserved a slot for
 * (packages/a2a-converse/src/stores/task-reservations.ts): what MAX_OPEN_TASKS_PER_CALLER counts. Apart from the
 * store, which decides when a task opens, closes or is reserved; this module only counts.
 */
export class CallerOpenTasks {
  readonly #now: () => number
  /** Caller key → its open tasks held. */
  readonly #open = new Map<string, number>()
  /** Caller key → its reserved new tasks (scope and task id, JSON) → when each reservation expires. */
  readonly #reserved = new Map<string, Map<string, number>>()

  constructor (now: () => number) {
    this.#now = now
  }

  /** Open tasks the caller holds now. */
  open (caller: string): number {
    return this.#open.get(caller) ?? 0
  }

  /** Open tasks plus live reservations of the caller (what its cap counts); expired reservations go. */
  held (caller: string): number {
    const reserved = this.#reserved.get(caller)
    if (reserved === undefined) return this.open(caller)
    const now = this.#now()
    for (const [key, until] of reserved) if (until <= now) reserved.delete(key)
    if (reserved.size === 0) this.#reserved.delete(caller)
    return this.open(caller) + reserved.size
  }

  /** Reserves the slot of `key` for the caller until `until`. */
  reserve (caller: string, key: string, until: number): void {
    let reserved = this.#reserved.get(caller)
    if (reserved === undefined) {
      reserved = new Map()
      this.#reserved.set(caller, reserved)
    }
    reserved.set(key, until)
  }

  /** Takes the reservation of `key`; true when there was a live one. */
  take (caller: string, key: string): boolean {
    const reserved = this.#reserved.get(caller)
    const until = reserved?.get(key)
    if (reserved === undefined || until === undefined) return false
    reserved.delete(key)
    if (reserved.size === 0) this.#reserved.delete(caller)
    return until > this.#now()
  }

  /** One more open task of the caller. */
  opened (caller: string): void {
    this.#open.set(caller, this.open(caller) + 1)
  }

  /** One open task of the caller fewer (it finished or went). */
  closed (caller: string): void {
    const left = this.open(caller) - 1
    if (left === 0) this.#open.delete(caller)
    else this.#open.set(caller, left)
  }
}
