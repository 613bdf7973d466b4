/**
 * Rate limits of the gateway's A2A door and operator API (@fastify/rate-limit): a fixed window of
 * RATE_LIMIT_WINDOW_MS per key, counted in Redis when REDIS_URL is set (every instance shares the counts) or in
 * this process's memory (a bounded LRU of keys). The key is the authenticated caller on an agent that requires
 * one, else the client address (TRUST_PROXY decides which address that is); the operator API counts per address,
 * before its key is checked, so wrong-key guesses are limited too.
 *
 * Over the limit: HTTP 429 with Retry-After — on the A2A door with a JSON-RPC -32000 body (reason RATE_LIMITED,
 * see a2a-endpoint.ts), on the operator API with its usual error body. Each limiter is an onRequest hook of the
 * scope it is applied to, added before the routes' own hooks, so it runs first.
 *
 * When Redis cannot be reached, requests are let through (skipOnError) and a warning is logged at most once a
 * minute: the limit protects the service, it is not worth refusing every caller for.
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import { Redis } from 'ioredis'
import { RateLimitedError } from '../http/rate-limited-error.js'

export interface RateLimitConfig {
  /** Requests per window and key on the A2A door; 0: no limit. */
  max: number
  /** Requests per window and client address on the operator API; 0: no limit. */
  operatorMax: number
  windowMs: number
  /** redis:// or rediss://; unset: counted in memory. */
  redisUrl?: string
  /** Prefix of every Redis key (several deployments, or test runs, may share one Redis). */
  redisKeyPrefix: string
}

/** Counts one request under `key`: undefined when it may go on, else how long to wait. */
export type RateCounter = (key: string) => Promise<{ retryAfterSec: number } | undefined>

export interface RateLimits {
  /** Limits the routes registered in `scope` after it, each request counted under `key(request)`. */
  apply (scope: FastifyInstance, options: { name: string, max: number, key: (request: FastifyRequest) => Promise<string> | string }): Promise<void>
  /**
   * A counter for requests that are not Fastify routes (the gRPC door), with the same store, window and rules.
   * `scope` must be a scope of its own (the limiter's decorators are per scope).
   */
  counter (scope: FastifyInstance, options: { name: string, max: number }): Promise<RateCounter>
  close (): Promise<void>
}

interface KeyedRequest { key: string }

/** Keys held in memory at most, per limiter (least recently used go first). */
const MEMORY_KEYS = 10_000
const WARN_INTERVAL_MS = 60_000

/** `refused(name)`: told of every request a limiter refuses (the metrics). */
export function openRateLimits (config: RateLimitConfig, log: FastifyBaseLogger, refused: (name: string) => void): RateLimits {
  let lastWarning = 0
  const redis = config.redisUrl === undefined
    ? undefined
    : new Redis(config.redisUrl, {
      // As @fastify/rate-limit recommends: a request never waits long for Redis.
      connectTimeout: 500,
      maxRetriesPerRequest: 1,
      lazyConnect: false
    })
  redis?.on('error', (error: Error & { code?: string }) => {
    const now = Date.now()
    if (now - lastWarning < WARN_INTERVAL_MS) return
    lastWarning = now
    // The URL may hold a password: only the error's code.
    log.warn({ code: error.code }, 'rate limits: Redis is unreachable; requests are not limited until it is back')
  })

  return {
    async apply (scope, { name, max, key }) {
      if (max === 0) return
      await scope.register(rateLimit, {
        global: false,
        redis,
        nameSpace: `${config.redisKeyPrefix}${name}:`,
        cache: MEMORY_KEYS,
        skipOnError: true
      })
      scope.addHook('onRequest', scope.rateLimit({
        max,
        timeWindow: config.windowMs,
        keyGenerator: key,
        errorResponseBuilder: (_request, context) => {
          refused(name)
          return new RateLimitedError(Math.max(1, Math.ceil(context.ttl / 1000)))
        }
      }))
    },
    async counter (scope, { name, max }) {
      if (max === 0) return async () => undefined
      await scope.register(rateLimit, {
        global: false,
        redis,
        nameSpace: `${config.redisKeyPrefix}${name}:`,
        cache: MEMORY_KEYS,
        skipOnError: true
      })
      // The plugin's own check without a reply (createRateLimit); it reads the key through keyGenerator and the
      // route's group id through routeOptions, so the request it is given carries just those.
      const check = scope.createRateLimit({ max, timeWindow: config.windowMs, keyGenerator: (request) => (request as unknown as KeyedRequest).key })
      return async (key) => {
        const result = await check({ key, routeOptions: {} } as unknown as FastifyRequest)
        if (result.isAllowed || !result.isExceeded) return undefined
        refused(name)
        return { retryAfterSec: Math.max(1, result.ttlInSeconds) }
      }
    },
    async close () {
      // Counters live in Redis with their expiry: nothing to hand over, so no QUIT round trip (and no wait for a
      // Redis that is not there).
      redis?.disconnect()
    }
  }
}
