/**
 * The AgentStore contract (packages/a2a-converse/src/stores/agent-store.ts), run on every store: memory and embedded
 * (test/library/stores/agent-store.test.ts) and PostgreSQL (test/library/stores/postgres-agent-store.test.ts).
 */
import type { Test } from 'tap'
import {
  AgentExistsError, AgentLimitError, AgentVersionConflictError, MAX_AGENT_VERSIONS_KEPT, type AgentStore
} from '../../../packages/a2a-converse/src/stores/agent-store.js'

export interface AgentStoreContractOptions {
  /** A store of its own (empty; a new one per call), on the clock given. */
  create (options: { maxAgents?: number, now?: () => number }): Promise<AgentStore>
}

const by = (change: string, detail?: string) => ({ by: 'operator', change, ...(detail !== undefined ? { detail } : {}) })

export function agentStoreContract (t: Test, options: AgentStoreContractOptions): void {
  t.test('create, get, list in id order; a duplicate id is refused', async (t) => {
    let clock = 1000
    const store = await options.create({ now: () => clock++ })
    const b = await store.create('b', { id: 'b', name: 'B', nested: { list: [1, 'two', null] } }, by('publish'))
    t.same(b, { id: 'b', version: 1, definition: { id: 'b', name: 'B', nested: { list: [1, 'two', null] } }, updatedAt: 1000, updatedBy: 'operator' })
    await store.create('a', { id: 'a' }, { by: 'key-1', change: 'publish' })
    t.same((await store.list()).map((agent) => [agent.id, agent.version, agent.updatedBy]), [['a', 1, 'key-1'], ['b', 1, 'operator']])
    t.same(await store.heads(), [{ id: 'a', version: 1 }, { id: 'b', version: 1 }], 'heads: ids and versions, in id order')
    t.same(await store.get('b'), b)
    t.equal(await store.get('c'), undefined)
    await t.rejects(store.create('b', { id: 'b' }, by('publish')), AgentExistsError)
    const got = await store.get('b')
    ;(got?.definition.nested as { list: unknown[] }).list.push('mutated')
    t.same((await store.get('b'))?.definition.nested, { list: [1, 'two', null] }, 'what a caller holds is a copy')
    t.equal(store.maxAgents, 1000, 'the default bound')
  })

  t.test('replace: a new version, over the expected one only; unknown: undefined', async (t) => {
    const store = await options.create({})
    await store.create('a', { id: 'a', n: 1 }, by('publish'))
    const second = await store.replace('a', { id: 'a', n: 2 }, 1, by('replace'))
    t.match(second, { id: 'a', version: 2, definition: { id: 'a', n: 2 } })
    const error = await store.replace('a', { id: 'a', n: 3 }, 1, by('replace')).catch((error: unknown) => error)
    t.ok(error instanceof AgentVersionConflictError)
    t.equal((error as AgentVersionConflictError).current, 2, 'the conflict names the current version')
    t.match(await store.get('a'), { version: 2, definition: { n: 2 } }, 'a stale replace changed nothing')
    t.match(await store.replace('a', { id: 'a', n: 3 }, undefined, by('close')), { version: 3 }, 'no expected version: unconditional')
    t.equal(await store.replace('nobody', { id: 'nobody' }, undefined, by('replace')), undefined)
    t.equal(await store.replace('nobody', { id: 'nobody' }, 4, by('replace')), undefined)
  })

  t.test('delete: the version it records; the audit stays and a new publish continues it', async (t) => {
    let clock = 5000
    const store = await options.create({ now: () => clock++ })
    await store.create('a', { id: 'a' }, by('publish'))
    await store.replace('a', { id: 'a', x: 1 }, 1, by('add-document', 'faq'))
    await t.rejects(store.delete('a', 1, by('unpublish')), AgentVersionConflictError)
    t.equal(await store.delete('a', 2, by('unpublish')), 3)
    t.equal(await store.get('a'), undefined)
    t.same(await store.list(), [])
    t.equal(await store.delete('a', undefined, by('unpublish')), undefined, 'gone: undefined')
    t.same(await store.versions('a'), [
      { version: 3, at: 5002, by: 'operator', change: 'unpublish' },
      { version: 2, at: 5001, by: 'operator', change: 'add-document', detail: 'faq' },
      { version: 1, at: 5000, by: 'operator', change: 'publish' }
    ], 'newest first')
    t.match(await store.create('a', { id: 'a' }, by('publish')), { version: 4 }, 'never an ETag used before')
    t.equal(await store.delete('a', undefined, by('unpublish')), 5, 'no expected version: unconditional')
    t.same(await store.versions('never'), [])
  })

  t.test('maxAgents: a publish past it is refused; an unpublish makes room', async (t) => {
    const store = await options.create({ maxAgents: 2 })
    t.equal(store.maxAgents, 2)
    await store.create('a', { id: 'a' }, by('publish'))
    await store.create('b', { id: 'b' }, by('publish'))
    await t.rejects(store.create('c', { id: 'c' }, by('publish')), AgentLimitError)
    await t.rejects(store.create('a', { id: 'a' }, by('publish')), AgentExistsError, 'a duplicate is a duplicate, full or not')
    await store.delete('a', undefined, by('unpublish'))
    t.match(await store.create('c', { id: 'c' }, by('publish')), { version: 1 })
    await t.rejects(Promise.all([store.create('d', { id: 'd' }, by('publish')), store.create('e', { id: 'e' }, by('publish'))]), AgentLimitError)
    t.equal((await store.list()).length, 2, 'concurrent publishes are counted one after the other')
  })

  t.test(`the audit keeps the newest ${MAX_AGENT_VERSIONS_KEPT} entries of an agent`, async (t) => {
    const store = await options.create({})
    await store.create('a', { id: 'a' }, by('publish'))
    for (let version = 1; version <= MAX_AGENT_VERSIONS_KEPT + 4; version++) await store.replace('a', { id: 'a', version }, version, by('replace'))
    const versions = await store.versions('a')
    t.equal(versions.length, MAX_AGENT_VERSIONS_KEPT)
    t.equal(versions[0].version, MAX_AGENT_VERSIONS_KEPT + 5)
    t.equal(versions.at(-1)?.version, 6)
  })

  t.test('U+0000 in a definition\'s strings is kept or replaced, never a failure', async (t) => {
    const store = await options.create({})
    await store.create('z', { id: 'z', name: 'a\0b' }, by('publish'))
    t.match((await store.get('z'))?.definition.name, /^a[\0\uFFFD]b$/)
    await store.replace('z', { id: 'z', name: 'c\0d' }, 1, by('replace'))
    t.match((await store.get('z'))?.definition.name, /^c[\0\uFFFD]d$/)
    await store.close()
  })
}
