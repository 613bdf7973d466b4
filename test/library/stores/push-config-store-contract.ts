/**
 * The PushConfigStore contract (packages/a2a-converse/src/push/push-config-store.ts), run on every store: memory
 * (test/library/push/push-config-store.test.ts), embedded (test/library/stores/embedded-stores.test.ts) and PostgreSQL
 * (test/library/stores/postgres-push-config-store.test.ts).
 */
import { randomUUID } from 'node:crypto'
import type { Test } from 'tap'
import { ServerCallContext } from '@a2a-js/sdk/server'
import { AuthenticatedCaller } from '../../../packages/a2a-converse/src/auth/sdk-user.js'
import { CONVERSE_EXTENSION_URI } from '../../../packages/a2a-converse/src/core/uri.js'
import type { PushConfigStore } from '../../../packages/a2a-converse/src/push/push-config-store.js'
import { CALLER_KEY_STATE } from '../../../packages/a2a-converse/src/stores/caller-key.js'

export interface PushConfigStoreContractOptions {
  /** A store of its own agent (a new one per call). */
  create (options: { maxConfigsPerCaller?: number }): PushConfigStore
}

function callerContext (callerId: string, extensions: string[] = []): ServerCallContext {
  return new ServerCallContext({
    user: new AuthenticatedCaller(callerId),
    requestedExtensions: extensions,
    state: new Map([[CALLER_KEY_STATE, `caller:${callerId}`]])
  })
}

function config (url = 'https://hooks.example.com/a2a') {
  return { tenant: '', id: '', taskId: '', url, token: 'tok', authentication: { scheme: 'Bearer', credentials: 'secret' } }
}

export function pushConfigStoreContract (t: Test, options: PushConfigStoreContractOptions): void {
  const alice = callerContext('alice', [CONVERSE_EXTENSION_URI])
  const bob = callerContext('bob')

  t.test('save assigns an id in place; load, configsOf and delete in the caller\'s scope', async (t) => {
    const store = options.create({})
    const taskId = randomUUID()
    const given = config()
    await store.save(taskId, alice, given)
    t.match(given.id, /^[0-9a-f-]{36}$/, 'an id, assigned in place')
    t.match(await store.load(taskId, alice), [{ id: given.id, taskId, url: given.url, token: 'tok', authentication: { scheme: 'Bearer', credentials: 'secret' } }])
    t.match(await store.configsOf(taskId, alice), [{ config: { id: given.id, url: given.url }, converse: true }], 'the creating request activated the extension')
    t.strictSame(await store.load(taskId, bob), [], 'another caller sees none')
    await store.delete(taskId, bob, given.id)
    t.equal((await store.load(taskId, alice)).length, 1, 'nor deletes any')
    const named = { ...config('https://hooks.example.com/b'), id: 'named' }
    await store.save(taskId, bob, { ...config(), id: 'bob-1' })
    t.match(await store.configsOf(taskId, bob), [{ config: { id: 'bob-1' }, converse: false }])
    await store.save(taskId, alice, named)
    t.equal(named.id, 'named', 'a given id is kept')
    t.strictSame((await store.load(taskId, alice)).map((entry) => entry.id).sort(), [given.id, 'named'].sort())
    await store.delete(taskId, alice, 'named')
    await store.delete(taskId, alice, 'named')
    t.strictSame((await store.load(taskId, alice)).map((entry) => entry.id), [given.id], 'delete is idempotent')
    await store.delete(taskId, alice, 'never-there')
    await store.delete(randomUUID(), alice)
    const byTask = randomUUID()
    await store.save(byTask, alice, { ...config(), id: undefined as unknown as string })
    await store.save(byTask, alice, { ...config(), id: byTask })
    t.equal((await store.load(byTask, alice)).length, 2, 'an absent id is assigned too')
    await store.delete(byTask, alice)
    t.equal((await store.load(byTask, alice)).length, 1, 'no config id: the one named as its task (the SDK\'s default)')
    await store.dropTask(byTask, alice)
    await store.dropTask(taskId, alice)
    t.strictSame(await store.load(taskId, alice), [], 'dropTask removes the task\'s configs')
    t.equal((await store.load(taskId, bob)).length, 1, 'in the scope only')
    await store.dropTask(randomUUID(), alice)
  })

  t.test('MAX_PUSH_CONFIGS_PER_CALLER: counted per caller, a replacement is not one more, a deletion makes room', async (t) => {
    const store = options.create({ maxConfigsPerCaller: 2 })
    const [one, two] = [randomUUID(), randomUUID()]
    await store.save(one, alice, { ...config(), id: 'a' })
    await store.save(two, alice, { ...config(), id: 'b' })
    await store.save(two, alice, { ...config('https://hooks.example.com/other'), id: 'b' })
    t.match(await store.load(two, alice), [{ id: 'b', url: 'https://hooks.example.com/other' }], 'replaced by id')
    await t.rejects(store.save(one, alice, { ...config(), id: 'c' }), { name: 'CallerCapError', cap: 'MAX_PUSH_CONFIGS_PER_CALLER', limit: 2 })
    t.equal((await store.load(one, alice)).length, 1, 'nothing written')
    await store.save(one, bob, { ...config(), id: 'c' })
    t.pass('another caller has its own count')
    await store.delete(one, alice, 'a')
    await store.save(one, alice, { ...config(), id: 'c' })
    await t.rejects(store.save(randomUUID(), alice, config()), { name: 'CallerCapError', cap: 'MAX_PUSH_CONFIGS_PER_CALLER' })
    await store.dropTask(two, alice)
    await store.save(randomUUID(), alice, config())
    t.pass('a dropped task\'s configs no longer count')
  })
}
