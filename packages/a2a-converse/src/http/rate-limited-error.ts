/** Too many requests from one caller (or client address): HTTP 429, and the seconds until the window resets. */
import { ConverseError, ERROR_CODES } from '../core/errors.js'

export class RateLimitedError extends ConverseError {
  readonly statusCode = 429
  readonly retryAfterSec: number
  constructor (retryAfterSec: number) {
    super(ERROR_CODES.RATE_LIMITED, `Rate limit exceeded; retry in ${retryAfterSec} s`)
    this.retryAfterSec = retryAfterSec
  }
}
