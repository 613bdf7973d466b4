/**
 * The official @a2a-js/sdk client, used as docs/clients.md shows: ClientFactory.createFromUrl with the URL forms that
 * resolve the card (an agent's URL with a trailing slash; the host root for the default agent), and listTasks
 * the way the client sends it (an unset status filter goes out as "UNRECOGNIZED").
 */
import t from 'tap'
import { Message, SendMessageRequest, TaskState, type ListTasksRequest, type Task } from '@a2a-js/sdk'
import { ClientFactory } from '@a2a-js/sdk/client'
import { startGateway, userMessage } from '../fixtures/gateway-helpers.js'
import { contextIdOf } from '../fixtures/context-ids.js'

t.test("an agent's URL with a trailing slash and the host root both resolve the card; without the slash the SDK misses it", async (t) => {
  const { base } = await startGateway(t)
  const factory = new ClientFactory()

  const agent = await factory.createFromUrl(`${base}/a2a/demo/`)
  t.equal((await agent.getAgentCard()).name, 'Demo shop assistant')
  const reply = await agent.sendMessage(SendMessageRequest.fromJSON({ message: userMessage('How long do I have to return an order?') })) as Message
  t.equal(reply.contextId.length > 0, true, 'it talks to the agent')

  const root = await factory.createFromUrl(base)
  t.equal((await root.getAgentCard()).supportedInterfaces[0].url, `${base}/a2a/demo`, 'the host root is the default agent')

  // The JS SDK resolves ".well-known/agent-card.json" relative to the URL: /a2a/.well-known/… is not a card.
  await t.rejects(factory.createFromUrl(`${base}/a2a/demo`), /404/)
})

t.test('listTasks({ contextId }) from the official client: its unset status filter means no filter', async (t) => {
  const { base } = await startGateway(t)
  const client = await new ClientFactory().createFromUrl(`${base}/a2a/demo/`)
  const started = await client.sendMessage(SendMessageRequest.fromJSON({
    message: userMessage('I would like to book a table', { contextId: contextIdOf('urls-list-1') })
  })) as Task
  t.equal(started.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED)

  // As a JavaScript caller writes it (the repro); the SDK's toJSON turns the missing status into "UNRECOGNIZED".
  const listed = await client.listTasks({ contextId: contextIdOf('urls-list-1') } as ListTasksRequest)
  t.same(listed.tasks.map((task) => task.id), [started.id])
  t.equal(listed.totalSize, 1)

  const other = await client.listTasks({ contextId: contextIdOf('nobody-here') } as ListTasksRequest)
  t.same(other.tasks, [])
})
