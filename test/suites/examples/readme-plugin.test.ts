/**
 * The README's plugin example, run as written (the package's imports pointed at this tree, the port a free one),
 * then asked by the official @a2a-js/sdk client with the extension switched on: what a newcomer pastes serves an
 * agent whose answers carry the envelope.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { Message, SendMessageRequest } from '@a2a-js/sdk'
import { ClientFactory, ServiceParameters, withA2AExtensions } from '@a2a-js/sdk/client'
import { ROOT } from '../../fixtures/gateway-process.js'
import { URI } from '../../fixtures/gateway-helpers.js'

t.test('the README plugin example serves an agent whose answers carry the envelope', async (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## The plugin in your own Fastify app'))
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1] as string
  t.ok(code.includes("from 'a2a-converse/fastify'"), 'the README has the example')
  t.ok(code.split('\n').length <= 16, 'a short one')
  const file = join(ROOT, 'test', `.readme-plugin-${process.pid}.ts`)
  t.teardown(() => rm(file, { force: true }))
  await writeFile(file, code
    .replace("'a2a-converse/fastify'", "'a2a-converse/fastify'")
    .replace("'a2a-converse/runtime'", "'a2a-converse/runtime'")
    .replace('await app.listen({ port: 8080 })', "await app.listen({ port: 0, host: '127.0.0.1' })\nexport { app }"))
  const { app } = await import(pathToFileURL(file).href) as { app: FastifyInstance }
  t.teardown(() => app.close())
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`

  const client = await new ClientFactory().createFromUrl(`${base}/a2a/support/`)
  t.equal((await client.getAgentCard()).name, 'Support')
  const reply = await client.sendMessage(SendMessageRequest.fromJSON({
    message: { messageId: 'readme-1', role: 'ROLE_USER', parts: [{ text: 'How long do I have to return an order?' }] }
  }), { serviceParameters: ServiceParameters.create(withA2AExtensions(URI)) }) as Message
  const text = reply.parts[0].content?.$case === 'text' ? reply.parts[0].content.value : ''
  t.match(text, /30 days of delivery/)
  t.match(reply.metadata?.[URI], {
    author: 'agent',
    answerCoverage: { availability: 'assessed', coverage: 'answered', reason: 'sufficient_evidence' },
    citations: [{ documentId: 'returns', title: 'Returns policy' }]
  })
})
