import t from 'tap'
import type { TaskPushNotificationConfig } from '@a2a-js/sdk'
import { ServerCallContext } from '@a2a-js/sdk/server'
import { MemoryPushConfigStore } from '../../../packages/a2a-converse/src/push/push-config-store.js'
import { pushConfigStoreContract } from '../stores/push-config-store-contract.js'

// The PushConfigStore contract on the memory store.
pushConfigStoreContract(t, { create: (options) => new MemoryPushConfigStore(options) })

t.test('the memory store\'s options and size', async (t) => {
  t.throws(() => new MemoryPushConfigStore({ maxConfigsPerCaller: 0 }), { name: 'InvalidOptionError' })
  t.equal(new MemoryPushConfigStore().maxConfigsPerCaller, 100)
  t.equal(new MemoryPushConfigStore().size, 0)
  const store = new MemoryPushConfigStore()
  const context = new ServerCallContext()
  await store.save('task-1', context, { id: 'c1', taskId: 'task-1', url: 'https://h.example/hook', token: '', tenant: '' } as TaskPushNotificationConfig)
  await store.save('task-1', context, { id: 'c2', taskId: 'task-1', url: 'https://h.example/hook', token: '', tenant: '' } as TaskPushNotificationConfig)
  t.equal(store.size, 2, 'counts every caller\'s configs')
})

t.test('the memory store hands delivery its configs frozen, and load a copy the caller may change', async (t) => {
  const store = new MemoryPushConfigStore()
  const context = new ServerCallContext()
  const given = { id: 'c1', taskId: 'task-1', url: 'https://h.example/hook', token: 't', tenant: '', authentication: { scheme: 'Bearer', credentials: 'x' } }
  await store.save('task-1', context, given as TaskPushNotificationConfig)
  given.url = 'https://elsewhere.example/'
  const [held] = await store.configsOf('task-1', context)
  t.equal(held.config.url, 'https://h.example/hook', 'the saved config is the store\'s own copy')
  t.ok(Object.isFrozen(held.config) && Object.isFrozen(held.config.authentication), 'frozen, deep')
  const [loaded] = await store.load('task-1', context)
  loaded.url = 'https://changed.example/'
  t.equal((await store.configsOf('task-1', context))[0].config.url, 'https://h.example/hook', 'a loaded copy changed changes nothing held')
})
