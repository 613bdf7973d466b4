/** The named errors of authentication, apart from the authenticator so that the doors do not load jose. */
import { ConverseError } from '../core/errors.js'

/** The request's credential names no caller. The message is the same whatever failed. */
export class AuthenticationError extends ConverseError {
  constructor () {
    super('A2A_CONVERSE_UNAUTHENTICATED', 'a valid bearer credential is required')
  }
}

/** The identity provider's keys could not be fetched: the request cannot be authenticated now. */
export class AuthenticationUnavailableError extends ConverseError {
  constructor () {
    super('A2A_CONVERSE_AUTHENTICATION_UNAVAILABLE', 'the identity provider\'s keys could not be fetched')
  }
}
