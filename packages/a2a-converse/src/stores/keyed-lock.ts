/**
 * Serialises async tasks per key inside one process: a promise chain per key, no global lock. Each task waits for
 * the previous task of its own key only; a link only ever resolves, so a failed task cannot poison the chain; the
 * key's entry is dropped when its chain is idle.
 */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<void>>()

  /** Runs `task` once every earlier task of the key has settled. */
  async run<T> (key: string, task: () => Promise<T>): Promise<T> {
    const release = await this.acquire(key)
    try {
      return await task()
    } finally {
      release()
    }
  }

  /**
   * Waits until every earlier holder of the key released it, then returns the release function (idempotent).
   * When `giveUp` rejects first, the wait ends with its rejection and the place in line is given up: later
   * holders still wait for the earlier ones, never for this one.
   */
  async acquire (key: string, giveUp?: Promise<never>): Promise<() => void> {
    const previous = this.#tails.get(key)
    let resolveHeld!: () => void
    const held = new Promise<void>((resolve) => { resolveHeld = resolve })
    const tail = previous === undefined ? held : previous.then(() => held)
    this.#tails.set(key, tail)
    let released = false
    const release = (): void => {
      if (released) return
      released = true
      resolveHeld()
      if (this.#tails.get(key) === tail) this.#tails.delete(key)
    }
    if (previous === undefined) return release
    try {
      await (giveUp === undefined ? previous : Promise.race([previous, giveUp]))
    } catch (error) {
      // The earlier holders still run: the key stays taken until they (and so this tail) are done.
      released = true
      resolveHeld()
      tail.then(() => { if (this.#tails.get(key) === tail) this.#tails.delete(key) })
      throw error
    }
    return release
  }

  /** Whether a task of the key is running or waiting. */
  busy (key: string): boolean {
    return this.#tails.has(key)
  }

  /** Settles when every task started so far has settled. */
  async idle (): Promise<void> {
    await Promise.all([...this.#tails.values()])
  }
}
