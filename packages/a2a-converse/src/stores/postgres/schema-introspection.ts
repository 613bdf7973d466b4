/**
 * What `migrate` hands Kysely's Migrator: the same database, except that its introspection sees only the schema
 * being migrated. The Migrator asks `db.introspection` whether the schema and its ledger and lock tables exist;
 * Kysely's PostgreSQL introspector answers by listing every column of every table of the database, with name
 * lookups (`has_schema_privilege`, `pg_get_serial_sequence`) that fail when another client drops a schema or a table
 * meanwhile (3F000, 42P01, 42703). A database other applications share — or a test suite whose tests drop their
 * schemas — then fails our start for nothing of ours. Listing our schema from the catalog by oid has no such lookup.
 */
import type { DatabaseIntrospector, Kysely, SchemaMetadata, TableMetadata } from 'kysely'
import { sql } from '../../peers/postgres.js'

export function withSchemaIntrospection (db: Kysely<any>, schema: string): Kysely<any> {
  const getTables = async (): Promise<TableMetadata[]> => (await sql<{ name: string, isView: boolean }>`
    select c.relname as name, c.relkind in ('v', 'm') as "isView"
      from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
     where n.nspname = ${schema} and c.relkind in ('r', 'p', 'v', 'm', 'f')`.execute(db))
    .rows.map(({ name, isView }) => ({ name, isView, schema, columns: [] }))
  const introspection: DatabaseIntrospector = {
    getSchemas: async (): Promise<SchemaMetadata[]> =>
      (await sql<SchemaMetadata>`select nspname as name from pg_catalog.pg_namespace where nspname = ${schema}`.execute(db)).rows,
    getTables,
    getMetadata: async () => ({ tables: await getTables() })
  }
  // Kysely keeps its state in private fields: its methods run on the database itself, not on this proxy.
  return new Proxy(db, {
    get (target, property) {
      if (property === 'introspection') return introspection
      const value: unknown = Reflect.get(target, property, target)
      return typeof value === 'function' ? value.bind(target) : value
    }
  })
}
