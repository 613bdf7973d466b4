/**
 * Both doors abort a request's signal when its client goes away before the JSON reply: a backend waiting on another
 * service (an upstream agent) stops waiting. A backend that waits for the abort, behind each door.
 */
import t, { type Test } from 'tap'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import express from 'express'
import Fastify from 'fastify'
import type { A2ABackend } from '../../../../packages/a2a-converse/src/protocol/backend.js'
import { converseRouter } from 'a2a-converse/express'
import { a2aEndpoint, converse } from 'a2a-converse/fastify'
import { internalError } from '../../../../packages/a2a-converse/src/protocol/errors.js'
import { userMessage } from '../../../fixtures/doors.js'

function waitingBackend () {
  const state = { started: 0, aborted: 0 }
  const backend: A2ABackend = {
    facts: { capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false }, requiredExtensions: [] },
    call: async (_request, context) => {
      state.started++
      await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }))
      state.aborted++
      return {}
    },
    async * stream () {},
    toError: () => internalError()
  }
  return { backend, state }
}

async function leave (t: Test, base: string, state: { started: number, aborted: number }): Promise<void> {
  const controller = new AbortController()
  const pending = fetch(`${base}/a2a/demo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: userMessage('hi') } }),
    signal: controller.signal
  })
  while (state.started === 0) await sleep(5)
  controller.abort()
  await t.rejects(pending)
  while (state.aborted === 0) await sleep(5)
  t.equal(state.aborted, 1, 'the backend saw the abort')
}

const card = { name: 'Demo', description: 'd' }

t.test('Express door', async (t) => {
  const { backend, state } = waitingBackend()
  const router = converseRouter({ agents: [{ id: 'demo', card, backend }] })
  const app = express()
  app.use(router)
  const server = await new Promise<Server>((resolve) => { const listening = app.listen(0, '127.0.0.1', () => resolve(listening)) })
  t.teardown(async () => {
    await router.close()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  await leave(t, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, state)
})

t.test('Fastify door', async (t) => {
  const { backend, state } = waitingBackend()
  const app = Fastify()
  await app.register(converse, { agents: [{ id: 'demo', card }] })
  await app.register(a2aEndpoint, { agents: [{ id: 'demo', backend }] })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  await leave(t, `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, state)
})
