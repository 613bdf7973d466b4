/**
 * The floor of a durable turn (issue 43): one autocommit INSERT of a conversation's bytes, a named (prepared)
 * statement sent by `pg` as the stores send theirs, one after the other — what a turn's writes would cost if they were
 * a single statement. Measured in the bench's own process, after the gateways of the scenario are closed: on PGlite
 * the database's work is this process's CPU (as the embedded gateway's is its own); on a server only the client's.
 */
import { performance } from 'node:perf_hooks'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'

/** Sends one query (`pg`'s Client or Pool query, or the embedded database's pool). */
export type SendQuery = (query: { name: string, text: string }, values: unknown[]) => Promise<unknown>

export interface Floor {
  /** Bytes of the JSON inserted per row. */
  bytes: number
  /** This process's CPU (user + system) per INSERT, µs. */
  cpuMicros: number
  /** Wall time per INSERT, µs. */
  wallMicros: number
}

/** A JSON document of about `bytes` characters (a conversation's turns stand in for its state). */
export function documentOf (bytes: number, id: number): string {
  const turn = { role: 'user', text: 'How long do I have to return an order?', at: new Date(0).toISOString(), messageId: String(id) }
  const turns: unknown[] = []
  let json = JSON.stringify({ turns })
  while (json.length < bytes) {
    turns.push(turn)
    json = JSON.stringify({ turns })
  }
  return json
}

/** Creates `table` (id, state jsonb) through `send`'s own connection (`setup`), then times `count` INSERTs. */
export async function insertFloor (setup: (text: string) => Promise<unknown>, send: SendQuery, table: string, bytes: number, count = 3000): Promise<Floor> {
  await setup(`create table if not exists ${table} (id text primary key, state jsonb not null)`)
  const insert = { name: `bench_floor_insert_${table.replace(/\W/g, '_')}`, text: `insert into ${table} (id, state) values ($1, $2::jsonb)` }
  const json = documentOf(bytes, 0)
  // Warm-up: the statement prepared, the table's first pages made.
  for (let id = 0; id < 200; id++) await send(insert, [`warm-${id}`, json])
  const cpu = process.cpuUsage()
  const started = performance.now()
  for (let id = 0; id < count; id++) await send(insert, [`row-${id}`, json])
  const wall = performance.now() - started
  const used = process.cpuUsage(cpu)
  return { bytes: json.length, cpuMicros: (used.user + used.system) / count, wallMicros: wall * 1000 / count }
}

/** Latency of `count` requests sent one after the other (no other load): p50 and p99, ms. */
export async function sequentialLatency (url: string, load: { method: string, headers?: Record<string, string>, body?: string }, count = 500): Promise<{ p50: number, p99: number }> {
  const times: number[] = []
  for (let index = 0; index < count; index++) {
    const started = performance.now()
    const res = await fetch(url, { method: load.method, headers: load.headers, body: load.body })
    await res.arrayBuffer()
    if (!res.ok) throw new Error(`sequential latency: HTTP ${res.status}`)
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  return { p50: times[Math.floor(count * 0.5)], p99: times[Math.floor(count * 0.99)] }
}

/** A connection's statements (`pg`'s client, or the embedded database's connection). */
export type Connection = { query: SendQuery & ((text: string) => Promise<unknown>) }

/**
 * What sharing a commit would buy (issue 43's group commit): `count` INSERTs of `bytes` on one connection, each its
 * own commit, then ten to a transaction; this process's CPU and the wall time per INSERT of each, in alternating
 * rounds (the first two, warming up, not counted).
 */
export async function commitSharing (connection: Connection, table: string, bytes: number, count = 2000, rounds = 6): Promise<{ alone: Floor, shared: Floor }> {
  const insert = { name: `bench_shared_insert_${table.replace(/\W/g, '_')}`, text: `insert into ${table} (id, state) values ($1, $2::jsonb)` }
  const json = documentOf(bytes, 0)
  // Ids of this run's own: the table holds the floor's rows.
  const run = process.hrtime.bigint().toString(36)
  let next = 0
  const ten = async (): Promise<void> => { for (let row = 0; row < 10; row++) await connection.query(insert, [`${run}-${next++}`, json]) }
  const kinds = {
    alone: ten,
    shared: async () => {
      await connection.query('begin')
      await ten()
      await connection.query('commit')
    }
  }
  const totals = { alone: { cpu: 0, wall: 0 }, shared: { cpu: 0, wall: 0 } }
  for (let round = 0; round < rounds; round++) {
    for (const kind of ['alone', 'shared'] as const) {
      const cpu = process.cpuUsage()
      const started = performance.now()
      for (let tens = 0; tens < count / 10; tens++) await kinds[kind]()
      const used = process.cpuUsage(cpu)
      if (round < 2) continue
      totals[kind].cpu += used.user + used.system
      totals[kind].wall += (performance.now() - started) * 1000
    }
  }
  const inserts = count * (rounds - 2)
  const floor = (kind: 'alone' | 'shared'): Floor => ({ bytes: json.length, cpuMicros: totals[kind].cpu / inserts, wallMicros: totals[kind].wall / inserts })
  return { alone: floor('alone'), shared: floor('shared') }
}

/** A conversation's bytes as the demo's knowledge turns leave them (the scenarios report the measured average). */
export const TURN_BYTES = 2000

/**
 * The floor as a gateway (issue 43): the memory gateway whose every POST first runs one INSERT of a conversation's
 * bytes, awaited before the request goes on — a durable turn that costs one statement and nothing else. Against the
 * memory gateway it is the highest ratio a store writing one statement per turn can reach.
 */
export async function withInsertPerTurn (app: FastifyInstance, setup: (text: string) => Promise<unknown>, send: SendQuery, table: string): Promise<FastifyInstance> {
  await setup(`create table if not exists ${table} (id text primary key, state jsonb not null)`)
  const insert = { name: `bench_turn_insert_${table.replace(/\W/g, '_')}`, text: `insert into ${table} (id, state) values ($1, $2::jsonb)` }
  const json = documentOf(TURN_BYTES, 0)
  app.addHook('preHandler', async (request) => {
    if (request.method === 'POST') await send(insert, [randomUUID(), json])
  })
  return app
}

/**
 * The rows' floor as a gateway (issue 43): the memory gateway whose every POST first writes, in one plain statement
 * on the real schema (migrated), the rows a knowledge turn on a new conversation must write — the conversation (its
 * owner counted by the schema's trigger) and its answer in the log — with none of the turn's checks (the cap, a
 * conversation that exists, the task index, the log's prune). What the engine costs for the turn's rows alone: no
 * store writing them can beat it.
 */
export async function withTurnRowsPerTurn (app: FastifyInstance, send: SendQuery): Promise<FastifyInstance> {
  // Table names as the library's migrations make them (a renamed table fails this statement loudly).
  const write = {
    name: 'bench_turn_rows',
    text: `with conversation as (
        insert into converse_conversations (agent_id, context_id, state, version, created_at, updated_at, owner)
        values ('demo', $1, $2::jsonb, 1, now(), now(), 'address:127.0.0.1')
      )
      insert into converse_answers (agent_id, context_id, at, availability, coverage, reason, question, question_key)
      values ('demo', $1, $3, 'assessed', 'answered', 'sufficient_evidence', '', '')`
  }
  const json = documentOf(TURN_BYTES, 0)
  app.addHook('preHandler', async (request) => {
    if (request.method === 'POST') await send(write, [randomUUID(), json, Date.now()])
  })
  return app
}
