import t from 'tap'
import { MemoryPushConfigStore } from '../../src/push/push-config-store.js'
import { pushConfigStoreContract } from '../stores/push-config-store-contract.js'

// The PushConfigStore contract on the memory store.
pushConfigStoreContract(t, { create: (options) => new MemoryPushConfigStore(options) })

t.test('the memory store\'s options and size', async (t) => {
  t.throws(() => new MemoryPushConfigStore({ maxConfigsPerCaller: 0 }), { name: 'InvalidOptionError' })
  t.equal(new MemoryPushConfigStore().maxConfigsPerCaller, 100)
  t.equal(new MemoryPushConfigStore().size, 0)
})
