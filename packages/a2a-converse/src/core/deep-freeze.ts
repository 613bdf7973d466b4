/** Freezes a plain-data value and everything it holds; returns it. Shared values that must never change. */
export function deepFreeze<T> (value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const member of Object.values(value)) deepFreeze(member)
    Object.freeze(value)
  }
  return value
}

/** Whether a value and everything it holds is frozen (primitives are). */
export function isDeepFrozen (value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true
  return Object.isFrozen(value) && Object.values(value).every(isDeepFrozen)
}
