/**
 * When a failed delivery is tried again, and when it is given up: exponential backoff with jitter from
 * PUSH_RETRY_BASE_MS, at most PUSH_RETRY_MAX_DELAY_MS between attempts, a webhook's Retry-After honoured (a later
 * time wins), and no attempt after PUSH_MAX_ATTEMPTS attempts or PUSH_MAX_AGE_MS after the update. Pure, so the
 * in-process queue and the PostgreSQL outbox decide alike.
 */
import type { PostOutcome } from './webhook-post.js'

export interface RetrySettings {
  /** Attempts per delivery at most (the first included). */
  maxAttempts: number
  /** No attempt starts later than this after the update was recorded. */
  maxAgeMs: number
  /** The first retry waits about this long (then doubling). */
  baseDelayMs: number
  /** The longest wait between attempts (a longer Retry-After gives up when it passes maxAgeMs). */
  maxDelayMs: number
  /** One attempt's time (connect, answer) at most. */
  timeoutMs: number
}

export const DEFAULT_RETRY_SETTINGS: RetrySettings = Object.freeze({
  maxAttempts: 8,
  maxAgeMs: 3_600_000,
  baseDelayMs: 1000,
  maxDelayMs: 300_000,
  timeoutMs: 10_000
})

export type NextStep =
  | { kind: 'done' }
  | { kind: 'retry', atMs: number }
  | { kind: 'give-up', reason: string }

/**
 * After attempt number `attempt` (1-based) ended with `outcome`, for an update recorded at `recordedAtMs`: done,
 * another attempt at `atMs`, or give up.
 */
export function nextStep (outcome: PostOutcome, attempt: number, recordedAtMs: number, nowMs: number, settings: RetrySettings, random = Math.random): NextStep {
  if (outcome.kind === 'delivered') return { kind: 'done' }
  if (outcome.kind === 'refused') return { kind: 'give-up', reason: outcome.reason }
  if (attempt >= settings.maxAttempts) return { kind: 'give-up', reason: `${outcome.reason} after ${attempt} attempts` }
  const backoff = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (attempt - 1))
  // Full jitter over the upper half: retries of many deliveries spread out, none comes much earlier than planned.
  const delay = Math.max(backoff * (0.5 + random() / 2), outcome.retryAfterMs ?? 0)
  const atMs = nowMs + delay
  if (atMs - recordedAtMs > settings.maxAgeMs) return { kind: 'give-up', reason: `${outcome.reason}; the next attempt would pass PUSH_MAX_AGE_MS` }
  return { kind: 'retry', atMs }
}
