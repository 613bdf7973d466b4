/**
 * The switch of src/gateway/live-agents.ts on its own (a memory store and hub, the put and remove recorded): one
 * change brings the store's version in (or takes an unpublished agent out) and tells the other instances; a version
 * that cannot be served is logged and not tried again; the store or the hub failing is logged, never thrown; a
 * notification from elsewhere and the periodic check both switch what differs; AGENTS_FILE's ids are never switched.
 * And the runtime's side (src/gateway/runtime.ts): build, switch, retire, remove.
 */
import t, { type Test } from 'tap'
import { InMemoryTaskStore } from '@a2a-js/sdk/server'
import { MemoryAgentStore, type AgentStore } from '../../packages/a2a-converse/src/stores/agent-store.js'
import { MemoryTaskEventHub, type TaskEventHub } from '../../packages/a2a-converse/src/events/task-event-hub.js'
import { MemoryConversationStore } from '../../packages/a2a-converse/src/stores/memory-conversation-store.js'
import { StoreUnavailableError } from '../../packages/a2a-converse/src/stores/errors.js'
import { AGENT_CHANGES, liveAgents, type LiveAgentsOptions } from '../../src/gateway/live-agents.js'
import { buildAgentRuntime } from '../../src/gateway/runtime.js'
import type { AgentDefinition } from '../../src/gateway/agent-definitions.js'

const by = { by: 'operator', change: 'publish' }
const definition = (id: string, name = id): Record<string, unknown> => ({ id, name, description: `${id} agent` })

/** A logger recording `level: message` lines. */
function recorder () {
  const lines: string[] = []
  const line = (level: string) => (first: unknown, second?: string) => { lines.push(`${level}: ${typeof first === 'string' ? first : second}`) }
  return { lines, log: { info: line('info'), warn: line('warn') } as unknown as LiveAgentsOptions['log'] }
}

async function until (what: string, probe: () => boolean): Promise<void> {
  const start = Date.now()
  while (!probe()) {
    if (Date.now() - start > 5000) throw new Error(`${what}: not within 5 s`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

function setup (t: Test, overrides: Partial<LiveAgentsOptions> = {}) {
  const store = new MemoryAgentStore()
  const events = new MemoryTaskEventHub()
  const served = new Map<string, number | 'file'>([['demo', 'file']])
  const puts: string[] = []
  const removed: string[] = []
  const { lines, log } = recorder()
  let failPut: string | undefined
  const live = liveAgents({
    store,
    events,
    fileIds: new Set(['demo']),
    served,
    check: (agent) => agent.definition as unknown as AgentDefinition,
    put: async (agent) => {
      if (agent.name === failPut) throw new Error(`cannot build ${agent.name}`)
      puts.push(`${agent.id}:${agent.name as string}`)
    },
    remove: (agentId) => { removed.push(agentId) },
    syncMs: 3_600_000,
    log,
    ...overrides
  })
  t.teardown(() => live.close())
  return { store, events, served, puts, removed, lines, live, failAt: (name: string) => { failPut = name } }
}

t.test('a change: the store\'s version served, the others told; unpublished: removed; the file\'s ids never switched', async (t) => {
  const { store, events, served, puts, removed, live, lines } = setup(t)
  const told: unknown[] = []
  events.subscribeConversations(AGENT_CHANGES, (event) => told.push(event))
  await store.create('shop', definition('shop'), by)
  await live.changed('shop')
  t.same(puts, ['shop:shop'])
  t.equal(served.get('shop'), 1)
  t.same(told, [{ agentId: 'shop' }], 'the other instances are told')
  await live.changed('shop')
  t.same(puts, ['shop:shop'], 'the version served already: nothing to do (the notification echo included)')
  await store.create('demo', definition('demo', 'stored demo'), by)
  await live.changed('demo')
  t.same(puts, ['shop:shop'], "AGENTS_FILE's id: never switched from the store")
  await live.changed('nobody')
  t.same(removed, [], 'an id never served: nothing to remove')
  await store.delete('shop', undefined, { by: 'operator', change: 'unpublish' })
  await live.changed('shop')
  t.same(removed, ['shop'])
  t.equal(served.has('shop'), false)
  t.match(lines, ['info: agent shop version 1 served', 'info: agent shop no longer served: unpublished'])
})

t.test('a version that cannot be served is logged and not tried again; the next version is', async (t) => {
  const { store, served, puts, live, lines, failAt } = setup(t)
  failAt('broken')
  await store.create('shop', definition('shop', 'broken'), by)
  await live.changed('shop')
  await live.check()
  t.same(puts, [])
  t.equal(served.has('shop'), false)
  t.equal(lines.filter((line) => /not served: cannot build broken/.test(line)).length, 1, 'logged once, not tried again')
  await store.replace('shop', definition('shop', 'fixed'), undefined, { by: 'operator', change: 'replace' })
  await live.check()
  t.same(puts, ['shop:fixed'])
  t.equal(served.get('shop'), 2)
})

t.test('the store or the hub failing: logged, never thrown; the periodic check logs a failure once, and the recovery', async (t) => {
  const store = new MemoryAgentStore()
  let down = false
  const failing = <T>(work: () => Promise<T>): Promise<T> => down ? Promise.reject(new StoreUnavailableError(new Error('connection refused'))) : work()
  const flaky: AgentStore = {
    maxAgents: store.maxAgents,
    list: async () => await failing(async () => await store.list()),
    heads: async () => await failing(async () => await store.heads()),
    get: async (id) => await failing(async () => await store.get(id)),
    create: async (...args) => await store.create(...args),
    replace: async (...args) => await store.replace(...args),
    delete: async (...args) => await store.delete(...args),
    versions: async (id) => await store.versions(id),
    close: async () => {}
  }
  const hub = new MemoryTaskEventHub()
  const mute: TaskEventHub = {
    publish: async (...args) => await hub.publish(...args),
    subscribe: (...args) => hub.subscribe(...args),
    publishConversation: async () => { throw new Error('NOTIFY failed') },
    subscribeConversations: (...args) => hub.subscribeConversations(...args),
    close: async () => await hub.close()
  }
  const { lines, live, puts } = setup(t, { store: flaky, events: mute })
  await store.create('shop', definition('shop'), by)
  down = true
  await live.changed('shop')
  t.match(lines.join('\n'), /warn: agent shop: its change is not served yet/)
  await live.check()
  await live.check()
  t.equal(lines.filter((line) => /the state store cannot be read/.test(line)).length, 1, 'a failing check is logged once')
  down = false
  await live.check()
  t.match(lines.join('\n'), /info: agent changes: the state store answers again/)
  t.same(puts, ['shop:shop'], 'the periodic check served it')
  await store.create('other', definition('other'), by)
  await live.changed('other')
  t.match(lines.join('\n'), /warn: agent other: the other instances were not told/)
})

t.test('told by another instance, or found by the periodic check', async (t) => {
  const { store, events, puts, served } = setup(t, { syncMs: 100 })
  await store.create('told', definition('told'), by)
  await events.publishConversation(AGENT_CHANGES, { agentId: 'told' })
  await events.publishConversation(AGENT_CHANGES, { agentId: 'not an id!' })
  await events.publishConversation(AGENT_CHANGES, { other: true })
  await until('the told one served', () => puts.includes('told:told'))
  await store.create('quiet', definition('quiet'), by)
  await until('the periodic check', () => puts.includes('quiet:quiet'))
  await store.delete('quiet', undefined, { by: 'operator', change: 'unpublish' })
  await until('the periodic check takes it out', () => !served.has('quiet'))
  t.same(puts.sort(), ['quiet:quiet', 'told:told'])
})

t.test('the runtime: a built version is switched in, the one before retired; a failed build holds nothing; remove', async (t) => {
  const events = new MemoryTaskEventHub()
  const runtime = await buildAgentRuntime({
    definitions: [{ id: 'shop', name: 'Shop', description: 'Shop', envelopeProvider: { url: 'http://127.0.0.1:9/envelope' } }],
    conversations: new MemoryConversationStore(),
    events,
    taskStoreFor: () => new InMemoryTaskStore(),
    turnLockFor: () => ({ acquire: async () => () => {} }) as never,
    retireAfterMs: 10
  })
  t.teardown(() => runtime.close())
  await t.rejects(runtime.build({ id: 'shop', name: 'Shop', description: 'Shop', executor: 'missing', envelopeProvider: { url: 'http://127.0.0.1:9/envelope' } }), /unknown executor "missing"/)
  const next = await runtime.build({ id: 'shop', name: 'Shop 2', description: 'Shop', envelopeProvider: { url: 'http://127.0.0.1:9/envelope' } })
  t.equal(next.agent.card.name, 'Shop 2')
  t.equal(next.upstream, undefined)
  next.switched()
  // The version before's provider closes after retireAfterMs.
  await new Promise((resolve) => setTimeout(resolve, 50))
  const plain = await runtime.build({ id: 'shop', name: 'Shop 3', description: 'Shop' })
  plain.switched()
  const again = await runtime.build({ id: 'shop', name: 'Shop 4', description: 'Shop', envelopeProvider: { url: 'http://127.0.0.1:9/envelope' } })
  again.switched()
  runtime.remove('shop')
  runtime.remove('shop')
  t.pass('a retired provider still waiting is closed with the runtime')
})
