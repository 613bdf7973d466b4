/**
 * The honest rule of a proxied agent's card (src/gateway/runtime.ts): `pushNotifications: true` only when the runtime
 * is given both the held turns' push and where upstream tasks' copies live (the gateway always is); a library
 * runtime with push for local agents only serves a proxied agent without it.
 */
import t from 'tap'
import { buildAgentRuntime } from '../../../../src/gateway/runtime.js'
import { memoryState } from '../../../../src/gateway/state.js'
import { createPushNotifications } from '../../../../packages/a2a-converse/src/push/index.js'
import { startUpstream } from '../../../fixtures/upstream-agent.js'

t.test('push for local agents only: a proxied agent says it does not deliver', async (t) => {
  const upstream = await startUpstream()
  t.teardown(() => upstream.close())
  const state = memoryState()
  const push = createPushNotifications()
  const runtime = await buildAgentRuntime({
    definitions: [{ id: 'shop', upstream: { url: upstream.base } }],
    conversations: state.conversations,
    events: state.events,
    taskStoreFor: state.taskStoreFor,
    push: (agentId, taskStore) => push.forAgent(agentId, taskStore)
  })
  t.teardown(async () => { await runtime.close(); await push.close(); await state.close() })
  const [agent] = runtime.agents
  t.equal((agent.card.capabilities as { pushNotifications?: boolean }).pushNotifications, false)
  t.equal(agent.backend?.facts.capabilities.pushNotifications, false, 'the service answers the config methods -32003')
})

t.test('with upstreamPush too: the card and the backend say it delivers', async (t) => {
  const upstream = await startUpstream()
  t.teardown(() => upstream.close())
  const state = memoryState()
  const push = createPushNotifications()
  const runtime = await buildAgentRuntime({
    definitions: [{ id: 'shop', upstream: { url: upstream.base } }],
    conversations: state.conversations,
    events: state.events,
    taskStoreFor: state.taskStoreFor,
    push: (agentId, taskStore) => push.forAgent(agentId, taskStore),
    upstreamPush: (agentId, held) => push.forAgent(agentId, state.upstreamCopiesFor(agentId).taskStore, held.configs)
  })
  t.teardown(async () => { await runtime.close(); await push.close(); await state.close() })
  const [agent] = runtime.agents
  t.equal((agent.card.capabilities as { pushNotifications?: boolean }).pushNotifications, true)
  t.equal(agent.backend?.facts.capabilities.pushNotifications, true)
})
