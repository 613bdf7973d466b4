/**
 * Hostile input at the gateway's JSON-RPC door (issue 10): bodies nested thousands of levels deep and malformed
 * typed calls get a precise -32602 naming the field, with no error logged and nothing written.
 */
import t from 'tap'
import { gateway, Client, URI } from '../fixtures/conversation-gateway.js'
import { logLines } from '../fixtures/gateway-helpers.js'

/** 3,000 levels of `{"a": …}` as JSON text: about 18 KB, as a fuzzer sends it (JSON.stringify would overflow first). */
const DEEP = `${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}`

function body (message: string): string {
  return `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":${message}}}`
}

t.test('a body nested 3,000 levels in metadata, parts[].data or call.arguments is -32602 naming where; nothing logged at error', async (t) => {
  const logs = logLines()
  const app = await gateway(t, { env: { LOG_LEVEL: 'info' }, loggerStream: logs.stream })
  const cases = [
    ['metadata', `{"messageId":"d1","role":"ROLE_USER","parts":[{"text":"hi"}],"metadata":${DEEP}}`, 'message.metadata.a.a'],
    ['parts[].data', `{"messageId":"d2","role":"ROLE_USER","parts":[{"data":${DEEP}}]}`, 'message.parts[0].data.a'],
    ['call.arguments', `{"messageId":"d3","role":"ROLE_USER","parts":[{"text":"x"}],"extensions":["${URI}"],` +
      `"metadata":{"${URI}":{"call":{"toolName":"book_table","arguments":${DEEP}}}}}`, `message.metadata.${URI}.call.arguments.a`]
  ]
  for (const [where, message, field] of cases) {
    const res = await app.inject({
      method: 'POST',
      url: '/a2a/demo',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': URI },
      payload: body(message)
    })
    t.equal(res.statusCode, 200, where)
    const reply = res.json()
    t.equal(reply.error.code, -32602, `${where}: -32602`)
    const violation = reply.error.data[0].fieldViolations[0]
    t.ok(violation.field.startsWith(field), `${where}: names ${violation.field.slice(0, 60)}…`)
    t.equal(violation.description, 'nests deeper than 64 levels')
  }
  t.same(logs.lines.filter((line) => line.level >= 50), [], 'no error-level line, no stack trace')
  const ready = await app.inject({ method: 'GET', url: '/health/ready' })
  t.equal(ready.statusCode, 200, 'still ready')
})

t.test('a typed call with an empty or non-string toolName is -32602 naming metadata[URI].call.toolName; nothing is written', async (t) => {
  const logs = logLines()
  const app = await gateway(t, { env: { LOG_LEVEL: 'info' }, loggerStream: logs.stream })
  const client = new Client(t, app)
  for (const toolName of ['', 42, null]) {
    const message = {
      messageId: `call-${String(toolName)}`,
      contextId: 'empty-tool',
      role: 'ROLE_USER',
      parts: [{ text: 'call' }],
      extensions: [URI],
      metadata: { [URI]: { call: { toolName, arguments: {} } } }
    }
    const reply = await client.call('SendMessage', { message })
    t.equal(reply.error?.code, -32602, `toolName ${JSON.stringify(toolName)}`)
    t.strictSame(reply.error.data[0].fieldViolations, [{ field: `message.metadata[${URI}].call.toolName`, description: 'must be a non-empty string' }])
  }
  t.same(logs.lines.filter((line) => line.level >= 40), [], 'no warning: the safety net never ran')
  const view = await app.inject({ method: 'GET', url: '/api/v1/agents/demo/conversations/empty-tool', headers: { authorization: 'Bearer operator-key-0123456789' } })
  t.equal(view.statusCode, 404, 'no conversation was written')
})
