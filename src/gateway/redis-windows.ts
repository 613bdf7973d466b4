/**
 * The rate limits' fixed window in Redis (REDIS_URL), shared by every instance: checked and counted in one script
 * (atomic, one round trip). Refused, the count is left as it is; admitted, INCRBY, and the key's expiry set when this
 * take opened the window. Counted for coverage only with a Redis server (TEST_REDIS_URL; test/coverage-map.js).
 */
import type { Redis } from 'ioredis'
import type { WindowStore } from './rate-limits.js'

const TAKE_SCRIPT = `
local n = tonumber(ARGV[1])
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count + n > tonumber(ARGV[2]) then
  -- No window yet (a batch larger than the whole limit): the window's length.
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then ttl = tonumber(ARGV[3]) end
  return {0, ttl}
end
if redis.call('INCRBY', KEYS[1], n) == n then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return {1, redis.call('PTTL', KEYS[1])}
`

type TakeCommand = (key: string, n: number, max: number, windowMs: number) => Promise<[number, number]>

/** Makes the script a command of the connection (ioredis sends it by its digest, loading it once). */
export function defineTake (redis: Redis): void {
  redis.defineCommand('rateLimitTake', { numberOfKeys: 1, lua: TAKE_SCRIPT })
}

/** The windows of one limit, its keys under `prefix`. */
export function redisWindows (redis: Redis, prefix: string, windowMs: number): WindowStore {
  const take = (redis as unknown as { rateLimitTake: TakeCommand }).rateLimitTake.bind(redis)
  return {
    async take (key, n, max) {
      const [admitted, ttl] = await take(`${prefix}${key}`, n, max, windowMs)
      return { admitted: admitted === 1, resetInMs: ttl }
    }
  }
}
