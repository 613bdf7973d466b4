/**
 * Serialises async tasks per key inside one process: a promise chain per key, no global lock. Each task waits for
 * the previous task of its own key only; a link only ever resolves, so a failed task cannot poison the chain; the
 * key's entry is dropped when its chain is idle.
 */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<void>>()

  /** Runs `task` once every earlier task of the key has settled. */
  async run<T> (key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key)
    let release!: () => void
    const held = new Promise<void>((resolve) => { release = resolve })
    const tail = previous === undefined ? held : previous.then(() => held)
    this.#tails.set(key, tail)
    try {
      if (previous !== undefined) await previous
      return await task()
    } finally {
      release()
      if (this.#tails.get(key) === tail) this.#tails.delete(key)
    }
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
