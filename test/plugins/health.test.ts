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

t.test('with return503OnClosing off, ready itself answers 503 draining during close; live stays up', async (t) => {
  // Fastify's default (return503OnClosing) answers every request with its own 503 while closing; an app that
  // turns it off still gets a draining readiness from this plugin.
  const app = Fastify({ return503OnClosing: false })
  await app.register(health, { checks: { database: () => true } })
  let ready: { status: number, body: unknown } | undefined
  let live: number | undefined
  app.addHook('preClose', async () => {
    const res = await fetch(`${address}/health/ready`)
    ready = { status: res.status, body: await res.json() }
    live = (await fetch(`${address}/health/live`)).status
  })
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  t.equal((await fetch(`${address}/health/ready`)).status, 200)
  await app.close()
  t.same(ready, { status: 503, body: { status: 'draining' } })
  t.equal(live, 200)
})
