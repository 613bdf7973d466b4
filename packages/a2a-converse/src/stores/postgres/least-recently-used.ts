/**
 * The trim the stores' memories share (remembered-conversations.ts, remembered-tasks.ts): a Map in least recently
 * used order (a use deletes and sets the key again), cut by a batch once past its bound.
 */

/**
 * What a bound keeps once passed: the least recently used tenth goes at once (none below 10). A Map keeps the slots
 * of deleted entries until it rehashes, so finding its oldest entry walks past every one deleted before it: dropping
 * one entry per write walked thousands of slots per turn once full (≈ 5 µs per turn at 10,000 keys); one walk per
 * batch does not.
 */
export function afterTrim (bound: number): number {
  return bound - Math.floor(bound / 10)
}

/** Forgets the map's least recently used keys (its first), in one walk, until `enough()`. */
export function forgetOldest<K> (map: ReadonlyMap<K, unknown>, enough: () => boolean, forget: (key: K) => void): void {
  for (const oldest of map.keys()) {
    if (enough()) return
    forget(oldest)
  }
}
