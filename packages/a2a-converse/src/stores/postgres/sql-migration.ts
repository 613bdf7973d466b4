/**
 * How one migration runs its DDL: in the target schema only, statement after statement. Apart from the migrations
 * themselves (the *-migrations.ts texts) so that each of them is only its SQL.
 */
import type { Kysely, Migration } from 'kysely'
import { sql } from '../../peers/postgres.js'

/** Unqualified DDL, like the SDK's: the migration's transaction looks names up in the target schema only. */
export async function useSchema (db: Kysely<any>, schema: string): Promise<void> {
  await sql`select set_config('search_path', quote_ident(${schema}), true)`.execute(db)
}

/** A migration running `statements` in order in `schema` (in the Migrator's transaction: all or nothing). */
export function sqlMigration (schema: string, statements: readonly string[]): Migration {
  return {
    async up (db) {
      await useSchema(db, schema)
      for (const statement of statements) await sql.raw(statement).execute(db)
    }
  }
}
