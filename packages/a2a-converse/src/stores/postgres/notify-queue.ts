/**
 * The task event hub's NOTIFYs (postgres-task-event-hub.ts), one statement on its way at a time: what is asked for
 * meanwhile waits and goes in the next statement, together. The first leaves once the event loop's current callbacks
 * have run (setImmediate), with whatever they asked for too: a turn whose one statement wrote its conversation and
 * its task sends its live event and its wake together. Under load, concurrent turns share a round trip (the inbox's
 * live event of every conversation write, the wake of every task save) instead of paying one each — the gateway's
 * CPU per turn on a server (docs/state.md, "Round trips per turn").
 *
 * Order is kept: statements go one after the other, and a statement's notifications are sent in the order asked
 * (PostgreSQL delivers a transaction's notifications in the order it sent them). PostgreSQL delivers identical
 * payloads of one transaction once, so an event equal to one already in the batch waits for the next statement (two
 * equal artifact chunks are two chunks); a wake equal to one in the batch goes once (a wake is a wake). An event too
 * large for a payload is spilled by its own statement, in its place in the order.
 */
import type pg from 'pg'

/** At most this many notifications in one statement, and about this many payload bytes. */
const MAX_BATCH = 100
const MAX_BATCH_BYTES = 256 * 1024

const NOTIFY = {
  name: 'converse_notify_all',
  text: 'select pg_notify($1, sent.payload) from unnest($2::text[]) with ordinality as sent (payload, position) order by sent.position'
}

interface Waiting {
  resolve: () => void
  reject: (error: unknown) => void
}

type Item = Waiting & ({ payload: string, wake: boolean } | { spill: pg.QueryConfig })

export class NotifyQueue {
  readonly #pool: pg.Pool
  readonly #channel: string
  readonly #queue: Item[] = []
  #sending: Promise<void> | undefined

  constructor (pool: pg.Pool, channel: string) {
    this.#pool = pool
    this.#channel = channel
  }

  /** Resolves once `payload` was NOTIFYed; rejects with the statement's error. `wake`: equal payloads may go as one. */
  async notify (payload: string, wake = false): Promise<void> {
    await this.#enqueue({ payload, wake })
  }

  /** Runs `statement` (a spilled event: its row and its NOTIFY) in its place in the order. */
  async spill (statement: pg.QueryConfig): Promise<void> {
    await this.#enqueue({ spill: statement })
  }

  /** Resolves once nothing is queued or on its way. */
  async idle (): Promise<void> {
    await this.#sending
  }

  async #enqueue (item: { payload: string, wake: boolean } | { spill: pg.QueryConfig }): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#queue.push({ ...item, resolve, reject })
      this.#sending ??= this.#send()
    })
  }

  async #send (): Promise<void> {
    // The first statement leaves after the callbacks of this turn of the event loop: what one database answer sets
    // off (a turn's statement that wrote its conversation and its task: the inbox's live event and the saves' wake)
    // goes in one statement.
    await new Promise((resolve) => setImmediate(resolve))
    while (this.#queue.length > 0) {
      const batch = this.#next()
      try {
        const first = batch[0]
        if ('spill' in first) await this.#pool.query(first.spill)
        else await this.#pool.query(NOTIFY, [this.#channel, [...new Set(batch.map((item) => (item as { payload: string }).payload))]])
        for (const item of batch) item.resolve()
      } catch (error) {
        for (const item of batch) item.reject(error)
      }
    }
    this.#sending = undefined
  }

  /** The next statement's items: a spill alone, or the notifications up to the next spill, repeated event or bound. */
  #next (): Item[] {
    const first = this.#queue[0]
    if ('spill' in first) return this.#queue.splice(0, 1)
    const payloads = new Set<string>()
    let bytes = 0
    let count = 0
    for (const item of this.#queue) {
      if ('spill' in item || count === MAX_BATCH || (count > 0 && bytes + item.payload.length > MAX_BATCH_BYTES)) break
      if (payloads.has(item.payload) && !item.wake) break
      payloads.add(item.payload)
      bytes += item.payload.length
      count++
    }
    return this.#queue.splice(0, count)
  }
}
