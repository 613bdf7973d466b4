import { startGateway } from '/work/wt-mcp/dist/bench/gateway-servers.js'
import { ASK_REQUEST, MCP_HEADERS } from '/work/wt-mcp/dist/bench/mcp.js'
import autocannon from 'autocannon'
for (const perRequest of [false, true, false, true]) {
  const server = await startGateway(false, perRequest)
  const url = server.url + '/mcp/a/demo'
  const before = process.cpuUsage()
  const result = await autocannon({ url, method: 'POST', headers: MCP_HEADERS, body: ASK_REQUEST, connections: 10, duration: 3 })
  const cpu = process.cpuUsage(before)
  console.log(perRequest ? 'per-request' : 'fast', 'rps', result.requests.average, 'non2xx', result.non2xx, 'cpu µs/req', ((cpu.user + cpu.system) / result.requests.total).toFixed(0))
  await server.close()
}
process.exit(0)
