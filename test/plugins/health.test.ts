import t from 'tap'
import Fastify from 'fastify'
import health from '../../plugins/health.js'

t.test('live always answers; ready follows its checks', async (t) => {
  let dbUp = true
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(health, {
    checks: {
      database: async () => dbUp,
      cache: () => true
    }
  })
  t.same((await app.inject('/health/live')).json(), { status: 'ok' })
  let res = await app.inject('/health/ready')
  t.equal(res.statusCode, 200)
  t.same(res.json(), { status: 'ready', checks: { database: 'ok', cache: 'ok' } })
  dbUp = false
  res = await app.inject('/health/ready')
  t.equal(res.statusCode, 503)
  t.same(res.json(), { status: 'unavailable', checks: { database: 'failing', cache: 'ok' } })
})

t.test('a throwing or hanging check counts as failing, within the time budget', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(health, {
    checkTimeoutMs: 50,
    checks: {
      throws: () => { throw new Error('down') },
      hangs: () => new Promise<boolean>(() => {})
    }
  })
  const res = await app.inject('/health/ready')
  t.equal(res.statusCode, 503)
  t.same(res.json().checks, { throws: 'failing', hangs: 'failing' })
})

t.test('ready answers 503 once the instance drains', async (t) => {
  const app = Fastify()
  await app.register(health)
  let during: number | undefined
  app.addHook('preClose', async () => {
    during = (await fetch(`${address}/health/ready`)).status
  })
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  t.equal((await fetch(`${address}/health/ready`)).status, 200)
  await app.close()
  t.equal(app.draining, true)
  t.equal(during, 503)
})
