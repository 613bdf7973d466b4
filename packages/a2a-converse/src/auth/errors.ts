/** The named errors of authentication, apart from the authenticator so that the doors do not load jose. */
import { ConverseError, ERROR_CODES } from '../core/errors.js'

/** The request's credential names no caller. The message is the same whatever failed. */
export class AuthenticationError extends ConverseError {
  constructor () {
    super(ERROR_CODES.UNAUTHENTICATED, 'a valid bearer credential is required')
  }
}

/** The identity provider's keys could not be fetched: the request cannot be authenticated now. */
export class AuthenticationUnavailableError extends ConverseError {
  constructor () {
    super(ERROR_CODES.AUTHENTICATION_UNAVAILABLE, 'the identity provider\'s keys could not be fetched')
  }
}
