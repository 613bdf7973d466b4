/**
 * The gateway's Prometheus metrics (prom-client), one registry per app so that apps in one process never share a
 * count. Every label value is bounded: agents are the agents served (anything else `unknown`), methods the A2A 1.0
 * methods (else `unknown`), result codes the A2A error codes (else `other`), envelope values their enums (else
 * `invalid`); no task, context or caller id and no text is ever a label. docs/observability.md has the table.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { AVAILABILITIES, COVERAGE_REASONS, COVERAGES, ROUTINE_STATUSES } from 'a2a-converse/core'
import { JsonRpcErrorCode } from 'a2a-converse/service'
import { A2A_METHODS } from 'a2a-converse/service'
import type { PushStats } from 'a2a-converse/push'
import type { Inbox } from 'a2a-converse/runtime'
import type { CallObserver, CallRecord } from 'a2a-converse/service'
import type { PoolCounts } from './state.js'

const PREFIX = 'a2a_converse_'
const METHODS: ReadonlySet<string> = new Set(A2A_METHODS)
const CODES: ReadonlySet<number> = new Set(Object.values(JsonRpcErrorCode))
const BINDINGS: ReadonlySet<string> = new Set(['jsonrpc', 'http+json', 'grpc', 'jsonrpc-0.3', 'http+json-0.3', 'mcp', 'direct'])
/** Seconds: a cached answer in milliseconds up to a slow upstream's minute. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

export interface GatewayMetrics {
  readonly registry: Registry
  /** For the A2A endpoint: every call's end, every stream's opening and end. */
  readonly observer: CallObserver
  /** For the MCP door: a tools/call by tool name. */
  toolCalled (agentId: string, tool: string): void
  /** A request refused by a rate limit, by its limiter's name (`a2a`, `a2a-grpc`, `operator`). */
  rateLimited (door: string): void
  /** The inbox with its takeovers, a person's replies and releases counted. */
  countedInbox (inbox: Inbox): Inbox
  /** Reads the pool's counts at each scrape (none: a state without a pool, nothing to read). */
  watchPool (pool: PoolCounts | undefined): void
  /** Reads a deliverer's counts (in process, or the PostgreSQL outbox) at each scrape (none: no such deliverer). */
  watchPush (stats: PushStats | undefined): void
  /** The exposition text and its content type. */
  scrape (): Promise<{ contentType: string, text: string }>
}

/**
 * A counter whose per-request increments are summed in a map keyed by the label values (bounded like the labels) and
 * handed to prom-client when it is scraped: a request costs a string key and a map update, not a label hash and
 * validation per increment.
 */
class BatchedCounter {
  readonly #pending = new Map<string, { labels: Record<string, string>, count: number }>()
  readonly counter: Counter<string>

  constructor (config: { name: string, help: string, labelNames: string[], registers: Registry[] }) {
    const pending = this.#pending
    this.counter = new Counter({
      ...config,
      collect () {
        for (const { labels, count } of pending.values()) this.inc(labels, count)
        pending.clear()
      }
    })
  }

  /** One more under `labels`, whose values joined are `key`. */
  inc (key: string, labels: () => Record<string, string>): void {
    const entry = this.#pending.get(key)
    if (entry === undefined) this.#pending.set(key, { labels: labels(), count: 1 })
    else entry.count++
  }
}

function member (values: readonly string[], value: unknown, otherwise: string): string {
  return typeof value === 'string' && values.includes(value) ? value : otherwise
}

/** Series read at each scrape from what is watched: PostgreSQL pools' connections, push deliveries' outcomes. */
function watchedSeries (registers: Registry[]): { pools: PoolCounts[], pushStats: PushStats[] } {
  const pools: PoolCounts[] = []
  // eslint-disable-next-line no-new -- registered, read at each scrape
  new Gauge({
    name: `${PREFIX}pg_pool_connections`,
    help: 'PostgreSQL pool connections (STATE=postgres) by state: total, idle, waiting (clients waiting for one)',
    labelNames: ['state'],
    registers,
    collect () {
      for (const pool of pools) {
        this.set({ state: 'total' }, pool.totalCount)
        this.set({ state: 'idle' }, pool.idleCount)
        this.set({ state: 'waiting' }, pool.waitingCount)
      }
    }
  })
  const pushStats: PushStats[] = []
  // eslint-disable-next-line no-new -- registered, read at each scrape
  new Counter({
    name: `${PREFIX}push_deliveries_total`,
    help: 'Push notification attempts by outcome: delivered, retried (an attempt to be tried again), gave_up',
    labelNames: ['outcome'],
    registers,
    collect () {
      this.reset()
      for (const stats of pushStats) {
        this.inc({ outcome: 'delivered' }, stats.delivered)
        this.inc({ outcome: 'retried' }, stats.retried)
        this.inc({ outcome: 'gave_up' }, stats.gaveUp)
      }
    }
  })
  return { pools, pushStats }
}

/** The inbox whose takeovers, releases and accepted replies are counted per agent. */
function countedInbox (inbox: Inbox, counters: { takeovers: Counter, releases: Counter, humanReplies: Counter }, agentLabel: (agentId: string) => string): Inbox {
  const { takeovers, releases, humanReplies } = counters
  const counted: Inbox = Object.create(inbox)
  counted.takeover = async (agentId, contextId, trace) => {
    const view = await inbox.takeover(agentId, contextId, trace)
    if (view !== undefined) takeovers.inc({ agent: agentLabel(agentId) })
    return view
  }
  counted.release = async (agentId, contextId, trace) => {
    const view = await inbox.release(agentId, contextId, trace)
    if (view !== undefined) releases.inc({ agent: agentLabel(agentId) })
    return view
  }
  counted.reply = async (agentId, contextId, text, trace) => {
    const result = await inbox.reply(agentId, contextId, text, trace)
    if (typeof result === 'object') humanReplies.inc({ agent: agentLabel(agentId) })
    return result
  }
  return counted
}

/**
 * `agentIds`: the agents whose ids label the series (any other: `unknown`). A Set is read live: the gateway's set of
 * the agents it serves now (src/gateway/live-agents.ts), bounded by MAX_AGENTS and the agents file.
 */
export function createGatewayMetrics (agentIds: readonly string[] | ReadonlySet<string>): GatewayMetrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const agents: ReadonlySet<string> = agentIds instanceof Set ? agentIds : new Set(agentIds)
  const agentLabel = (agentId: string): string => agents.has(agentId) ? agentId : 'unknown'
  const registers = [registry]

  const requests = new BatchedCounter({
    name: `${PREFIX}requests_total`,
    help: 'A2A requests by agent, binding, method and result code (ok, or the A2A error code)',
    labelNames: ['agent', 'binding', 'method', 'code'],
    registers
  })
  const latency = new Histogram({
    name: `${PREFIX}request_duration_seconds`,
    help: 'A2A request latency (a stream: to its end) by agent and method',
    labelNames: ['agent', 'method'],
    buckets: LATENCY_BUCKETS,
    registers
  })
  const openStreams = new Gauge({ name: `${PREFIX}open_streams`, help: 'Open SSE and gRPC streams by agent and binding', labelNames: ['agent', 'binding'], registers })
  const toolCalls = new Counter({ name: `${PREFIX}mcp_tool_calls_total`, help: 'MCP door tools/call by agent and tool', labelNames: ['agent', 'tool'], registers })
  const answers = new BatchedCounter({
    name: `${PREFIX}answers_total`,
    help: "Turns' answers by agent, envelope availability, coverage and reason (none: not assessed)",
    labelNames: ['agent', 'availability', 'coverage', 'reason'],
    registers
  })
  const routines = new Counter({ name: `${PREFIX}routine_turns_total`, help: 'Turns answered in a routine, by agent and routine status', labelNames: ['agent', 'status'], registers })
  const takeovers = new Counter({ name: `${PREFIX}takeovers_total`, help: 'Conversations taken over by a person, by agent', labelNames: ['agent'], registers })
  const humanReplies = new Counter({ name: `${PREFIX}human_replies_total`, help: "A person's replies accepted, by agent", labelNames: ['agent'], registers })
  const releases = new Counter({ name: `${PREFIX}releases_total`, help: 'Conversations released back to the agent, by agent', labelNames: ['agent'], registers })
  const rateLimited = new Counter({ name: `${PREFIX}rate_limited_total`, help: 'Requests refused by a rate limit (HTTP 429), by door', labelNames: ['door'], registers })
  const storeErrors = new Counter({ name: `${PREFIX}store_errors_total`, help: 'A2A requests failed because the state store was unreachable, by agent', labelNames: ['agent'], registers })

  const { pools, pushStats } = watchedSeries(registers)

  function callEnded (record: CallRecord): void {
    const agent = agentLabel(record.agentId)
    const method = METHODS.has(record.method) ? record.method : 'unknown'
    const binding = BINDINGS.has(record.binding) ? record.binding : 'other'
    const code = record.errorCode === undefined ? 'ok' : CODES.has(record.errorCode) ? String(record.errorCode) : 'other'
    requests.inc(`${agent}\u0000${binding}\u0000${method}\u0000${code}`, () => ({ agent, binding, method, code }))
    latency.observe({ agent, method }, record.durationMs / 1000)
    if (record.storeUnavailable) storeErrors.inc({ agent })
    const envelope = record.answer?.envelope
    if (envelope === undefined) return
    const verdict = envelope.answerCoverage
    const availability = member(AVAILABILITIES, verdict?.availability, 'invalid')
    const coverage = verdict?.coverage === undefined ? 'none' : member(COVERAGES, verdict.coverage, 'invalid')
    const reason = verdict?.reason === undefined ? 'none' : member(COVERAGE_REASONS, verdict.reason, 'invalid')
    answers.inc(`${agent}\u0000${availability}\u0000${coverage}\u0000${reason}`, () => ({ agent, availability, coverage, reason }))
    if (envelope.routine !== undefined) routines.inc({ agent, status: member(ROUTINE_STATUSES, envelope.routine.status, 'invalid') })
  }

  return {
    registry,
    observer: {
      callEnded,
      streamOpened: (agentId, binding) => { openStreams.inc({ agent: agentLabel(agentId), binding: BINDINGS.has(binding) ? binding : 'other' }) },
      streamClosed: (agentId, binding) => { openStreams.dec({ agent: agentLabel(agentId), binding: BINDINGS.has(binding) ? binding : 'other' }) }
    },
    toolCalled: (agentId, tool) => { toolCalls.inc({ agent: agentLabel(agentId), tool }) },
    rateLimited: (door) => { rateLimited.inc({ door }) },
    countedInbox: (inbox) => countedInbox(inbox, { takeovers, releases, humanReplies }, agentLabel),
    watchPool: (pool) => { if (pool !== undefined) pools.push(pool) },
    watchPush: (stats) => { if (stats !== undefined) pushStats.push(stats) },
    async scrape () {
      return { contentType: registry.contentType, text: await registry.metrics() }
    }
  }
}
