/**
 * A task store given to the gateway (options.taskStores) on STATE=embedded: its saves write no outbox rows, so its
 * agent's configs and deliveries are this process's (src/gateway/app.ts, `push`); the config methods work alike.
 */
import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BoundedMemoryTaskStore } from '../../../packages/a2a-converse/src/stores/memory-task-store.js'
import { Client, gateway } from '../../fixtures/conversation-gateway.js'

t.test('STATE=embedded with a given task store: a config is created and read back in process', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'push-given-'))
  t.teardown(async () => await rm(dataDir, { recursive: true, force: true }))
  const app = await gateway(t, {
    env: { STATE: 'embedded', DATA_DIR: dataDir, PUSH_ALLOWED_HOSTS: '127.0.0.1', PUSH_ALLOW_HTTP: 'true' },
    taskStores: { demo: new BoundedMemoryTaskStore() }
  })
  const client = new Client(t, app)
  const routine = await client.task('book a table')
  const created = await client.call('CreateTaskPushNotificationConfig', { taskId: routine.id, url: 'http://127.0.0.1:9/hook' })
  t.equal(created.error, undefined)
  const read = await client.call('GetTaskPushNotificationConfig', { taskId: routine.id, id: created.result.id })
  t.match(read.result, { taskId: routine.id, url: 'http://127.0.0.1:9/hook' })
})
