/**
 * A person's reply to a held task on the embedded database (the default state). The reply's conversation update
 * used to load the held task from inside the update; the update holds the embedded database's only session while it
 * runs, so that load waited for the update itself and the operator's POST never answered. The held task is now
 * looked up before the update (packages/a2a-converse/src/runtime/inbox.ts, reply).
 */
import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client, envelopeOf, gateway, operator, textOf } from '../fixtures/conversation-gateway.js'

t.test('STATE=embedded: take over a routine\'s task, a held turn, the person replies into it', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'inbox-reply-'))
  t.teardown(async () => await rm(dataDir, { recursive: true, force: true }))
  const app = await gateway(t, { env: { STATE: 'embedded', DATA_DIR: dataDir } })
  const client = new Client(t, app)
  const routine = await client.task('book a table')
  const contextId = routine.contextId
  t.equal((await operator(app, 'POST', `demo/conversations/${contextId}/takeover`)).statusCode, 200)
  const held = await client.task('Can a person help me?', { taskId: routine.id })
  t.equal(held.status.state, 'TASK_STATE_WORKING', 'the turn waits for a person')
  const replied = await operator(app, 'POST', `demo/conversations/${contextId}/messages`, { text: 'Hello, this is Sam.' })
  t.equal(replied.statusCode, 201)
  t.match(replied.json(), { taskId: routine.id, delivered: true })
  const stored = await client.getTask(routine.id)
  t.equal(textOf(stored.status.message), 'Hello, this is Sam.', 'the task holds the reply')
  t.equal(envelopeOf(t, stored.status.message).author, 'human')
})
