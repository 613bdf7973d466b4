/**
 * `pg` and `kysely` for a2a-converse/postgres (and the SDK's database task store, built on kysely): optional peer
 * dependencies (peers/import-peer.ts). The embedded database's PGlite is loaded when one is opened
 * (stores/postgres/embedded-database.ts), so a server-only deployment needs no PGlite.
 */
/* eslint-disable @typescript-eslint/no-redeclare -- a class is exported as a value and a type of one name, as its package does */
import { importPeer } from './import-peer.js'

const ENTRY = 'a2a-converse/postgres'
const PACKAGES = ['pg', 'kysely']
const pgModule = await importPeer<typeof import('pg')>('pg', ENTRY, PACKAGES)
const kysely = await importPeer<typeof import('kysely')>('kysely', ENTRY, PACKAGES)
const database = await importPeer<typeof import('@a2a-js/sdk/server/database')>('@a2a-js/sdk/server/database', ENTRY, PACKAGES)

export const pgDriver = pgModule.default
export const { Kysely, Migrator, PostgresDialect, sql } = kysely
export type Kysely<DB> = import('kysely').Kysely<DB>
export const { DatabaseTaskStore, TASK_TABLE } = database
export type DatabaseTaskStore = import('@a2a-js/sdk/server/database').DatabaseTaskStore
