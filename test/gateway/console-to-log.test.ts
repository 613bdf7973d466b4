/**
 * Plain-text console lines of @a2a-js/sdk go through pino (issue 10, defect 9): in the real entry every stdout
 * line parses as JSON, the SDK's "Reference task … not found." included.
 */
import t from 'tap'
import { URI } from '../fixtures/gateway-helpers.js'
import { startMain } from '../fixtures/gateway-process.js'
import { routeConsoleToLogger } from '../../src/gateway/console-to-log.js'

t.setTimeout(300_000)

t.test('routeConsoleToLogger: console methods become log calls; the originals come back', async (t) => {
  const calls: Array<[string, object, string]> = []
  const logger = {
    error: (object: object, message: string) => calls.push(['error', object, message]),
    warn: (object: object, message: string) => calls.push(['warn', object, message]),
    info: (object: object, message: string) => calls.push(['info', object, message]),
    debug: (object: object, message: string) => calls.push(['debug', object, message])
  }
  const original = (..._args: unknown[]): void => {}
  const target = { error: original, warn: original, info: original, log: original, debug: original }
  const restore = routeConsoleToLogger(logger, target)
  const failure = new Error('boom')
  target.warn('Reference task %s not found.', 't-1')
  target.error('Agent execution failed for message m-1:', failure)
  target.log('plain', { a: 1 })
  target.info('info')
  target.debug('debug')
  t.strictSame(calls, [
    ['warn', { source: 'console' }, 'Reference task t-1 not found.'],
    ['error', { source: 'console', err: failure }, 'Agent execution failed for message m-1:'],
    ['info', { source: 'console' }, 'plain { a: 1 }'],
    ['info', { source: 'console' }, 'info'],
    ['debug', { source: 'console' }, 'debug']
  ])
  restore()
  t.strictSame(Object.values(target), [original, original, original, original, original])
})

t.test('the real entry: an unknown referenceTaskId is logged as a JSON warning; every stdout line parses', async (t) => {
  const child = startMain(t, { LOG_LEVEL: 'info' })
  const base = await child.listening()
  const response = await fetch(`${base}/a2a/demo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: 'ref-1', role: 'ROLE_USER', parts: [{ text: 'book a table' }], referenceTaskIds: ['missing-task'] } }
    })
  })
  t.equal(response.status, 200)
  const line = await child.waitForLine((entry) => entry.source === 'console', 'the SDK\'s console line')
  t.match(line, { level: 40, source: 'console', msg: 'Reference task missing-task not found.' })
  t.doesNotThrow(() => child.lines(), 'every stdout line is JSON')
  t.notMatch(child.stdout(), /^Reference task/m)
})
