/** Named errors of the core. Each carries a stable `code` so callers can branch without parsing messages. */
export class ConverseError extends Error {
  readonly code: string
  constructor (code: string, message: string) {
    super(message)
    this.name = new.target.name
    this.code = code
  }
}

/** A routine declaration is invalid; the message names the routine and the field. */
export class RoutineDeclarationError extends ConverseError {
  readonly routine: string
  readonly field: string
  constructor (routine: string, field: string, problem: string) {
    super('A2A_CONVERSE_ROUTINE_DECLARATION', `routine "${routine}": ${field} ${problem}`)
    this.routine = routine
    this.field = field
  }
}

/** An option passed at registration is invalid; the message names the option. */
export class InvalidOptionError extends ConverseError {
  readonly option: string
  constructor (option: string, problem: string) {
    super('A2A_CONVERSE_INVALID_OPTION', `option "${option}" ${problem}`)
    this.option = option
  }
}

/** The envelope provider did not answer within its timeout. */
export class ProviderTimeoutError extends ConverseError {
  constructor (timeoutMs: number) {
    super('A2A_CONVERSE_PROVIDER_TIMEOUT', `envelope provider did not answer within ${timeoutMs} ms`)
  }
}
