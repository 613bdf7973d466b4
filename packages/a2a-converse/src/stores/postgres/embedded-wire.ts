/**
 * `pg` speaking PostgreSQL's wire protocol to the embedded session (PGlite) as it would to a server's socket: a Duplex
 * whose writes go to PGlite's `execProtocolRaw` and whose reads are the session's answers, which pg parses as it
 * parses a server's. pg corks a query's messages (Parse, Bind, Describe, Execute, Sync) and writes them at once, so a
 * query is one call into the session — where PGlite's node-postgres adapter made one call per message and parsed each
 * answer into objects for pg (docs/state.md, "The session's wire": ≈ 50 µs of CPU less per statement, measured).
 * Public APIs on both sides: pg's `stream` option, PGlite's `execProtocolRaw` (the raw protocol PGlite's socket
 * server relays); test/library/stores/embedded-wire.test.ts speaks it without the stores.
 */
import { Duplex } from 'node:stream'
import type { PGlite } from '@electric-sql/pglite'

/** The type byte of the protocol's Terminate message ('X'): pg ending its connection. The session stays open. */
const TERMINATE = 0x58

export class EmbeddedWire extends Duplex {
  readonly #session: Pick<PGlite, 'execProtocolRaw'>

  constructor (session: Pick<PGlite, 'execProtocolRaw'>) {
    super()
    this.#session = session
  }

  // What pg's Connection asks of a socket (without its keepAlive option): there is nothing to connect to, nor to tune.
  connect (): this {
    process.nextTick(() => this.emit('connect'))
    return this
  }

  setNoDelay (): this {
    return this
  }

  // The session answers each write; there is nothing to read between them.
  override _read (): void {}

  override _write (chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.#send(chunk, done)
  }

  override _writev (chunks: Array<{ chunk: Buffer }>, done: (error?: Error | null) => void): void {
    this.#send(Buffer.concat(chunks.map(({ chunk }) => chunk)), done)
  }

  /** Writes are sequential (the next one waits for `done`): answers come back in order. */
  #send (messages: Buffer, done: (error?: Error | null) => void): void {
    if (messages[0] === TERMINATE) {
      this.push(null)
      done()
      return
    }
    this.#session.execProtocolRaw(messages).then((answer) => {
      // A copy: the session may reuse its buffer for the next answer.
      if (answer.length > 0) this.push(Buffer.from(answer))
      done()
    }, done)
  }
}
