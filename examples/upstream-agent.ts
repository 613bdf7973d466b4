/**
 * An A2A 1.0 agent of its own, for trying proxy mode: an @a2a-js/sdk Express server that knows nothing of the
 * converse extension or of a human inbox. It answers "stock <item>" with a Message, "order <item>" with a task
 * that asks for a quantity (INPUT_REQUIRED) and completes on the next message, anything else with a hint.
 *
 *   npm run example:upstream                                   # the agent on http://127.0.0.1:9000
 *   AGENTS_FILE=examples/proxy/agents.json npm start           # the gateway in front: /a2a/shop
 *
 * UPSTREAM_PORT / UPSTREAM_HOST change where it listens (port 0: any free port).
 */
import { randomUUID } from 'node:crypto'
import type { Server } from 'node:http'
import express from 'express'
import { AgentCard, Role, TaskState, type Message } from '@a2a-js/sdk'
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor } from '@a2a-js/sdk/server'
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express'
import { messageText } from 'a2a-converse/runtime'

const STOCK: Record<string, number> = { kettle: 12, toaster: 0, blender: 4 }

function reply (contextId: string, taskId: string, text: string): Message {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: []
  }
}

const executor: AgentExecutor = {
  async execute ({ taskId, contextId, userMessage, task }, bus) {
    const said = messageText(userMessage.parts)
    const status = (state: TaskState, text: string) => AgentEvent.statusUpdate({
      taskId, contextId, status: { state, message: reply(contextId, taskId, text), timestamp: new Date().toISOString() }, metadata: undefined
    })
    if (task !== undefined) {
      bus.publish(AgentEvent.task(task))
      bus.publish(status(TaskState.TASK_STATE_COMPLETED, `Ordered: ${said}.`))
      return
    }
    const [verb, item = ''] = said.toLowerCase().split(/\s+/, 2)
    if (verb === 'order') {
      bus.publish(AgentEvent.task({
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
        artifacts: [],
        history: [userMessage],
        metadata: undefined
      }))
      bus.publish(status(TaskState.TASK_STATE_INPUT_REQUIRED, `How many ${item || 'items'}?`))
      return
    }
    const text = verb === 'stock'
      ? (item in STOCK ? `${STOCK[item]} × ${item} in stock.` : `No ${item} in the catalogue.`)
      : 'Ask "stock <item>" or "order <item>".'
    bus.publish(AgentEvent.message(reply(contextId, '', text)))
  },
  async cancelTask (taskId, bus) {
    bus.publish(AgentEvent.statusUpdate({
      taskId, contextId: '', status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() }, metadata: undefined
    }))
  }
}

const handler = new DefaultRequestHandler(AgentCard.fromJSON({
  name: 'Warehouse',
  description: 'Stock levels and orders (an A2A agent without the converse extension)',
  version: '1.0.0',
  // Relative: the gateway resolves it against the card's URL.
  supportedInterfaces: [{ url: '/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
  capabilities: { streaming: true, pushNotifications: false },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'stock', name: 'Stock', description: 'Stock levels and orders', tags: ['shop'], examples: ['stock kettle'] }]
}), new InMemoryTaskStore(), executor)

const app = express()
app.use('/a2a', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }))
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }))
/* c8 ignore next 2 -- the defaults are for a person trying the example; the test picks a free port */
const port = Number(process.env.UPSTREAM_PORT ?? 9000)
const host = process.env.UPSTREAM_HOST ?? '127.0.0.1'
const server = await new Promise<Server>((resolve) => {
  const listening = app.listen(port, host, () => resolve(listening))
})
console.log(JSON.stringify({ msg: 'listening', address: server.address() }))
function stop (): void {
  server.close(() => process.exit(0))
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
