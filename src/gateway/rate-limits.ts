/**
 * The gateway's rate limits: a fixed window of RATE_LIMIT_WINDOW_MS per key, counted in Redis when REDIS_URL is set
 * (every instance shares the counts) or in this process's memory (a bounded LRU of keys).
 *
 * One count per caller across every door: the A2A doors (JSON-RPC, HTTP+JSON, 0.3), the MCP door and gRPC all take
 * from the same `a2a` limit, under the key the gateway builds (the authenticated caller on an agent that requires
 * one, else the client address; TRUST_PROXY decides which address that is). A request that carries several calls
 * (an MCP batch) takes one per call. The operator API and /metrics count per address in limits of their own, before
 * their key or token is checked, so wrong guesses are limited too.
 *
 * A take that would pass the limit is refused and counts nothing (so a batch too big for what is left of the window
 * leaves the rest to smaller requests). Over the limit: HTTP 429 with Retry-After — on the A2A door with a JSON-RPC
 * -32000 body (reason RATE_LIMITED, see a2a-endpoint.ts), on the operator API with its usual error body.
 *
 * When Redis cannot be reached, requests are let through and a warning is logged at most once a minute: the limit
 * protects the service, it is not worth refusing every caller for.
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify'
import { Redis } from 'ioredis'
import { RateLimitedError } from 'a2a-converse/service'
import { defineTake, redisWindows } from './redis-windows.js'

export interface RateLimitConfig {
  /** Requests per window and key on the A2A doors (every binding, MCP, gRPC: one count); 0: no limit. */
  max: number
  /** Requests per window and client address on the operator API (and, a count of its own, /metrics); 0: no limit. */
  operatorMax: number
  windowMs: number
  /** redis:// or rediss://; unset: counted in memory. */
  redisUrl?: string
  /** Prefix of every Redis key (several deployments, or test runs, may share one Redis). */
  redisKeyPrefix: string
}

/** Why a take was refused: how long until the window resets. */
export interface RateRefusal { retryAfterSec: number }

/** One limit: `max` requests per window and key, whoever takes from it. */
export interface RateLimit {
  /** Counts `n` requests (default 1) under `key`: undefined when admitted; a refusal, counting nothing, when they would pass the limit. */
  take (key: string, n?: number): Promise<RateRefusal | undefined>
}

export interface RateLimits {
  /** The limit named `name` (its Redis keys' infix): `max` per window and key; 0: never refuses. */
  limit (name: string, max: number): RateLimit
  /**
   * Limits the routes registered in `scope` after it: each request takes one from `limit` under `key(request)`,
   * before the routes' own hooks; over the limit, HTTP 429 with Retry-After and `refused(door)` told.
   */
  apply (scope: FastifyInstance, options: { door: string, limit: RateLimit, key: (request: FastifyRequest) => Promise<string> | string }): void
  close (): Promise<void>
}

/** Keys held in memory at most, per limit (least recently used go first). */
const MEMORY_KEYS = 10_000
const WARN_INTERVAL_MS = 60_000

/** Where a window's count lives; `take` as RateLimit's, for `n` ≥ 1. */
export interface WindowStore {
  take (key: string, n: number, max: number): Promise<{ admitted: boolean, resetInMs: number }>
}

/** A fixed window per key in this process: a Map in least-recently-used order, at most MEMORY_KEYS keys. */
function memoryWindows (windowMs: number): WindowStore {
  const windows = new Map<string, { count: number, resetAt: number }>()
  return {
    async take (key, n, max) {
      const now = Date.now()
      let window = windows.get(key)
      if (window === undefined || window.resetAt <= now) window = { count: 0, resetAt: now + windowMs }
      // Most recently used last; the first is the one to go.
      windows.delete(key)
      windows.set(key, window)
      if (windows.size > MEMORY_KEYS) windows.delete(windows.keys().next().value as string)
      const admitted = window.count + n <= max
      if (admitted) window.count += n
      return { admitted, resetInMs: window.resetAt - now }
    }
  }
}

/** `refused(door)`: told of every request a limit refuses (the metrics). */
export function openRateLimits (config: RateLimitConfig, log: FastifyBaseLogger, refused: (door: string) => void): RateLimits {
  let lastWarning = 0
  const warn = (error: Error & { code?: string }): void => {
    const now = Date.now()
    if (now - lastWarning < WARN_INTERVAL_MS) return
    lastWarning = now
    // The URL may hold a password: only the error's code.
    log.warn({ code: error.code }, 'rate limits: Redis is unreachable; requests are not limited until it is back')
  }
  const redis = config.redisUrl === undefined
    ? undefined
    : new Redis(config.redisUrl, {
      // A request never waits long for Redis.
      connectTimeout: 500,
      maxRetriesPerRequest: 1,
      lazyConnect: false
    })
  redis?.on('error', warn)
  if (redis !== undefined) defineTake(redis)
  const { windowMs } = config

  return {
    limit (name, max) {
      if (max === 0) return { take: async () => undefined }
      const store = redis === undefined ? memoryWindows(windowMs) : redisWindows(redis, `${config.redisKeyPrefix}${name}:`, windowMs)
      return {
        async take (key, n = 1) {
          const taken = await store.take(key, n, max).catch((error: Error) => { warn(error) })
          if (taken === undefined || taken.admitted) return undefined
          return { retryAfterSec: Math.max(1, Math.ceil(taken.resetInMs / 1000)) }
        }
      }
    },
    apply (scope, { door, limit, key }) {
      scope.addHook('onRequest', async (request, reply) => {
        const refusal = await limit.take(await key(request))
        if (refusal === undefined) return
        refused(door)
        reply.header('retry-after', String(refusal.retryAfterSec))
        throw new RateLimitedError(refusal.retryAfterSec)
      })
    },
    async close () {
      // Counters live in Redis with their expiry: nothing to hand over, so no QUIT round trip (and no wait for a
      // Redis that is not there).
      redis?.disconnect()
    }
  }
}
