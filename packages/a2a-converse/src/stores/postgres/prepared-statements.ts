/**
 * Every statement with parameters prepared once per connection and then only bound and executed, on the embedded
 * database and on a server: the task store's and the push stores' statements come from Kysely as text, and were
 * parsed and planned on every call (docs/state.md "Speed": most of a task turn's time on PGlite; a third of a routine's
 * wall time on a local server). A text is named the first time it is seen (`auto_<n>`), and `pg` sends it with that
 * name once per connection; at most MAX_PREPARED_STATEMENTS texts are named: they are the code's, but a multi-row
 * insert's text grows with its rows, so their number has a bound of its own (past it a text runs unnamed, as before).
 * A statement without parameters (BEGIN, COMMIT) goes by the simple protocol; one named by its caller keeps its name
 * (the conversation store's `prepared`).
 */
import type pg from 'pg'
import { pgDriver } from '../../peers/postgres.js'

/** The most statement texts named; past it, a new text is parsed and planned on each call. */
export const MAX_PREPARED_STATEMENTS = 256

export class PreparedStatements {
  readonly #names = new Map<string, string>()

  /** `query` with a name when it is a text with parameters (`values`: what the caller passed after it). */
  named<Q> (query: Q, values: unknown): Q | pg.QueryConfig {
    if (typeof query !== 'string' || !Array.isArray(values) || values.length === 0) return query
    let name = this.#names.get(query)
    if (name === undefined) {
      if (this.#names.size >= MAX_PREPARED_STATEMENTS) return query
      name = `auto_${this.#names.size}`
      this.#names.set(query, name)
    }
    return { name, text: query }
  }
}

/**
 * A `pg.Client` class whose `query` names statements by `statements`: the class a pool makes its connections of
 * (`pg.Pool`'s `Client` option), so Kysely's and every store's statements on the pool are prepared per connection.
 */
export function namingClient (statements: PreparedStatements): typeof pg.Client {
  return class NamingClient extends pgDriver.Client {
    // Every form of `query` (text and values, a config, a callback last) goes through: only a text with values changes.
    override query (...args: unknown[]): any {
      args[0] = statements.named(args[0], args[1])
      return (super.query as (...args: unknown[]) => unknown)(...args)
    }
  }
}
