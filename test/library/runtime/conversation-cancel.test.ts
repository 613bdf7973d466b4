/**
 * A task ends for every open stream, whoever ends it (A2A 1.0 §3.1.6: a stream MUST terminate when its task reaches a
 * terminal state): CancelTask on a turn held for a person — its executor returned long ago, the task is WORKING —
 * runs the agent's own cancel handling and ends the SubscribeToTask and SendStreamingMessage streams of that task.
 */
import t from 'tap'
import { Client, envelopeOf, envelopesIn, gateway, message, operator, statusMessageOf, stream, textOf } from '../../fixtures/conversation-gateway.js'

t.test('CancelTask on a held WORKING task ends its open streams with CANCELED', async (t) => {
  const app = await gateway(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const client = new Client(t, app)
  const first = await client.send('What are your opening hours?')
  const contextId = first.message.contextId
  t.equal((await operator(app, 'POST', `demo/conversations/${contextId}/takeover`)).statusCode, 200)

  const streaming = stream(base, 'SendStreamingMessage', { message: message('Is anyone there?', { contextId }) })
  const held = (await streaming.next((event) => event.result?.task !== undefined)).result.task
  await streaming.next((event) => event.result?.statusUpdate?.status?.state === 'TASK_STATE_WORKING')
  const subscriber = stream(base, 'SubscribeToTask', { id: held.id })
  await subscriber.next((event) => event.result?.task !== undefined)

  const canceled = await client.call('CancelTask', { id: held.id })
  t.equal(canceled.result.status.state, 'TASK_STATE_CANCELED')
  t.equal(textOf(canceled.result.status.message), 'Task canceled.', 'the agent\'s own cancel handling ran (not the SDK\'s generic text)')
  t.strictSame(envelopeOf(t, canceled.result.status.message).ownership, { state: 'ai_owned', suppressed: false })

  for (const [name, open] of [['SubscribeToTask', subscriber], ['SendStreamingMessage', streaming]] as const) {
    const last = await open.next((event) => event.result?.statusUpdate?.status?.state === 'TASK_STATE_CANCELED')
    t.equal(textOf(statusMessageOf(last)), 'Task canceled.', `${name}: the final status event`)
    await open.done
    t.pass(`${name}: the stream ended`)
    envelopesIn(t, open.events)
  }
  t.equal((await client.getTask(held.id)).status.state, 'TASK_STATE_CANCELED', 'GetTask shows what the client was told')
  const again = await client.call('CancelTask', { id: held.id })
  t.equal(again.result.status.state, 'TASK_STATE_CANCELED', 'canceling again answers the task')
})
