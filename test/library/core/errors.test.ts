import t from 'tap'
import { ConverseError, ERROR_CODES, InvalidOptionError, isConverseError } from '../../../packages/a2a-converse/src/core/errors.js'
import { StoreUnavailableError } from '../../../packages/a2a-converse/src/stores/errors.js'
import { MissingPeerError } from '../../../packages/a2a-converse/src/peers/import-peer.js'
import { EnvelopeServiceError } from '../../../packages/a2a-converse/src/core/http-envelope-provider.js'

t.test('every library error is a ConverseError with a code from ERROR_CODES', async (t) => {
  const codes = new Set<string>(Object.values(ERROR_CODES))
  for (const error of [new InvalidOptionError('x', 'is bad'), new StoreUnavailableError(), new MissingPeerError('a2a-converse/postgres', ['pg']), new EnvelopeServiceError('NOT_JSON', 'not JSON')]) {
    t.ok(error instanceof ConverseError, error.name)
    t.ok(codes.has(error.code), `${error.name}: ${error.code}`)
    t.equal(error.name, error.constructor.name, 'named after its class')
  }
  t.equal(new EnvelopeServiceError('HTTP_502', 'bad gateway').reason, 'HTTP_502', 'the envelope service error keeps what went wrong')
  t.ok(Object.isFrozen(ERROR_CODES))
  for (const [key, code] of Object.entries(ERROR_CODES)) t.equal(code, `A2A_CONVERSE_${key}`)
})

t.test('isConverseError: by brand, optionally by code', async (t) => {
  const error = new StoreUnavailableError()
  t.ok(isConverseError(error))
  t.ok(isConverseError(error, ERROR_CODES.STORE_UNAVAILABLE))
  t.notOk(isConverseError(error, ERROR_CODES.TASK_BUSY), 'another code')
  t.notOk(isConverseError(new Error('plain')))
  t.notOk(isConverseError({ code: ERROR_CODES.STORE_UNAVAILABLE }), 'a look-alike without the brand')
  t.notOk(isConverseError(null))
  t.notOk(isConverseError('A2A_CONVERSE_STORE_UNAVAILABLE'))
  // Another copy of the library (another class, the same registered symbol) is recognised.
  const foreign = Object.assign(new Error('from another copy'), { code: ERROR_CODES.STORE_UNAVAILABLE })
  Object.defineProperty(foreign, Symbol.for('a2a-converse.error'), { value: true })
  t.ok(isConverseError(foreign, ERROR_CODES.STORE_UNAVAILABLE))
  t.notOk(Object.keys(error).some((key) => key.includes('a2a-converse')), 'the brand is not an enumerable property (logs stay as they were)')
})
