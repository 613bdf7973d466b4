/**
 * The push credentials on the database checked at start (server or embedded): sealed with the current key, or the
 * start refused. Apart from the openers (postgres-state.ts, embedded-state.ts), which both run it after migrating.
 */
import { resealPushSecrets, sealedPushSecrets, type PostgresDatabase } from 'a2a-converse/postgres'
import type { SecretBox } from 'a2a-converse/push'
import type { StateLogger } from './database-stores.js'

/** A push credential sealed with a key the gateway was not given: the start is refused, naming the variables. */
export class SecretsKeyMissingError extends Error {
  constructor (problem: string, cause?: unknown) {
    super(problem)
    this.name = 'SecretsKeyMissingError'
    this.cause = cause
  }
}

/**
 * Every push config and outbox row sealed with the current key at start: rows in clear (written before sealing)
 * and rows under a previous key (a rotation) are re-sealed; one line says how many. Without a box (PostgreSQL
 * without SECRETS_KEY) a sealed row refuses the start (it could not be read).
 */
export async function resealed (database: PostgresDatabase, secrets: SecretBox | undefined, logger: StateLogger): Promise<void> {
  if (secrets === undefined) {
    if (await sealedPushSecrets(database.db)) {
      throw new SecretsKeyMissingError('SECRETS_KEY is not set, but the database holds push configs sealed with a key: set SECRETS_KEY (and SECRETS_KEY_PREVIOUS) to the key they were sealed with')
    }
    return
  }
  const rewritten = await resealPushSecrets(database.db, secrets).catch((error: Error) => {
    throw new SecretsKeyMissingError(`push credentials cannot be re-sealed with SECRETS_KEY: ${error.message}; give the key they were sealed with in SECRETS_KEY_PREVIOUS`, error)
  })
  if (rewritten > 0) logger.info({ rows: rewritten, keyId: secrets.keyId }, `push credentials: ${rewritten} rows re-sealed with the current key (key id ${secrets.keyId}); keys other than SECRETS_KEY are no longer needed by this database`)
}
