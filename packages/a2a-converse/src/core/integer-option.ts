/**
 * An integer option given at construction: its default when absent, else an integer of at least `min` (1 unless
 * said), or InvalidOptionError naming it. One check, so every store words the same mistake the same way.
 */
import { InvalidOptionError } from './errors.js'

export function integerOption (name: string, value: number | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < min) {
    throw new InvalidOptionError(name, min === 0 ? 'must be a non-negative integer' : 'must be a positive integer')
  }
  return value
}
