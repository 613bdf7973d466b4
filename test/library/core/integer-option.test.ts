/**
 * Every store's integer options: the default when absent, an integer of at least `min` otherwise, and the mistake
 * named in one wording (positive, or non-negative where 0 switches something off).
 */
import t from 'tap'
import { integerOption } from '../../../packages/a2a-converse/src/core/integer-option.js'
import { InvalidOptionError } from '../../../packages/a2a-converse/src/core/errors.js'

t.test('absent: the default; given: itself', async (t) => {
  t.equal(integerOption('maxTasks', undefined, 7), 7)
  t.equal(integerOption('maxTasks', 3, 7), 3)
  t.equal(integerOption('healthCheckIntervalMs', 0, 30_000, 0), 0, '0 where 0 is allowed')
})

t.test('not an integer, or below the least: the option named', async (t) => {
  t.throws(() => integerOption('maxTasks', 0, 7), new InvalidOptionError('maxTasks', 'must be a positive integer'))
  t.throws(() => integerOption('maxTasks', 1.5, 7), { option: 'maxTasks', message: 'option "maxTasks" must be a positive integer' })
  t.throws(() => integerOption('statementTimeoutMs', -1, 0, 0), { option: 'statementTimeoutMs', message: 'option "statementTimeoutMs" must be a non-negative integer' })
})
