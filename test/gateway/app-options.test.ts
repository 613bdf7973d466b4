/** buildGateway options: task stores per agent, readiness checks, the operator API only with a key. */
import t from 'tap'
import { InMemoryTaskStore, ServerCallContext } from '@a2a-js/sdk/server'
import { buildGateway } from '../../src/gateway/app.js'
import { loadConfig } from '../../src/gateway/config.js'
import { rpc, SEED_HEADERS, userMessage } from '../fixtures/gateway-helpers.js'

t.test('a task store given for an agent is the one its endpoint uses', async (t) => {
  const store = new InMemoryTaskStore()
  const app = await buildGateway({ config: loadConfig({ STATE: 'memory', LOG_LEVEL: 'silent' }), taskStores: { demo: store } })
  t.teardown(() => app.close())
  const res = await app.inject({
    method: 'POST', url: '/a2a/demo', headers: SEED_HEADERS, payload: rpc('SendMessage', { message: userMessage('book a table') })
  })
  const task = res.json().result.task
  t.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED')
  t.equal((await store.load(task.id, new ServerCallContext()))?.id, task.id)
})

t.test('readiness checks given as options decide /health/ready', async (t) => {
  let up = true
  const app = await buildGateway({ config: loadConfig({ STATE: 'memory', LOG_LEVEL: 'silent' }), readinessChecks: { database: () => up } })
  t.teardown(() => app.close())
  t.same((await app.inject('/health/ready')).json(), { status: 'ready', checks: { database: 'ok' } })
  up = false
  const res = await app.inject('/health/ready')
  t.equal(res.statusCode, 503)
  t.same(res.json(), { status: 'unavailable', checks: { database: 'failing' } })
})

t.test('the operator API is served only when OPERATOR_API_KEY is set', async (t) => {
  const without = await buildGateway({ config: loadConfig({ STATE: 'memory', LOG_LEVEL: 'silent' }) })
  t.teardown(() => without.close())
  t.equal((await without.inject('/api/v1/agents/demo/conversations/c1')).statusCode, 404)
  const key = 'a-long-enough-operator-key'
  const withKey = await buildGateway({ config: loadConfig({ STATE: 'memory', LOG_LEVEL: 'silent', OPERATOR_API_KEY: key }) })
  t.teardown(() => withKey.close())
  t.equal((await withKey.inject('/api/v1/agents/demo/conversations/c1')).statusCode, 401)
  t.equal((await withKey.inject({ url: '/api/v1/agents/demo/conversations/c1', headers: { authorization: `Bearer ${key}` } })).statusCode, 404)
})
