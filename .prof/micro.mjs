import { Server } from '@modelcontextprotocol/server'
import { connectDirectExchange, eligibleRequest } from '/work/wt-mcp/dist/src/mcp/direct-exchange.js'
const server = new Server({ name: 'x', version: '1' }, { capabilities: { tools: {} } })
const result = { content: [{ type: 'text', text: 'You can return an order within 30 days of delivery.' }], structuredContent: { author: 'agent', contextId: 'c' } }
server.setRequestHandler('tools/call', async () => result)
const ex = connectDirectExchange(() => server)
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'b', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} }
const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask_agent', arguments: { message: 'How long?' }, _meta: ENVELOPE } }
const headers = { 'content-type': 'application/json', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'ask_agent' }
async function round (n, elig) {
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) {
    const b = JSON.parse(JSON.stringify(body))
    if (elig) eligibleRequest('POST', headers, b)
    const r = await ex.exchange(b, i).reply
    JSON.stringify(r)
  }
  return Number(process.hrtime.bigint() - t0) / n / 1000
}
await round(2000, true)
for (let k = 0; k < 3; k++) console.log('µs/call with eligibility', (await round(3000, true)).toFixed(1), 'without', (await round(3000, false)).toFixed(1))
const t0 = process.hrtime.bigint(); for (let i = 0; i < 3000; i++) eligibleRequest('POST', headers, JSON.parse(JSON.stringify(body))); console.log('eligible alone', (Number(process.hrtime.bigint() - t0) / 3000 / 1000).toFixed(1))
process.exit(0)
