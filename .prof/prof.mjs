import { startGateway } from '/work/wt-mcp/dist/bench/gateway-servers.js'
import { ASK_REQUEST, MCP_HEADERS } from '/work/wt-mcp/dist/bench/mcp.js'
import autocannon from 'autocannon'
const server = await startGateway()
const url = server.url + '/mcp/a/demo'
const r1 = await fetch(url, { method: 'POST', headers: MCP_HEADERS, body: ASK_REQUEST }); console.log(r1.status, (await r1.text()).slice(0, 100))
const { Session } = await import('node:inspector/promises')
const session = new Session(); session.connect()
await session.post('Profiler.enable'); await session.post('Profiler.start')
const result = await autocannon({ url, method: 'POST', headers: MCP_HEADERS, body: ASK_REQUEST, connections: 10, duration: 4 })
const { profile } = await session.post('Profiler.stop')
console.log('rps', result.requests.average)
// self-time by function
const self = new Map(); const total = profile.samples.length
const byId = new Map(profile.nodes.map(n => [n.id, n]))
const counts = new Map(); for (const s of profile.samples) counts.set(s, (counts.get(s) ?? 0) + 1)
for (const [id, c] of counts) { const n = byId.get(id); const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) ?? 0) + c) }
console.log([...self].sort((a, b) => b[1] - a[1]).slice(0, 45).map(([k, c]) => `${(100 * c / total).toFixed(1)}% ${k}`).join('\n'))
// inclusive by file
const parent = new Map(); for (const n of profile.nodes) for (const ch of n.children ?? []) parent.set(ch, n.id)
const incl = new Map()
for (const [id, c] of counts) { const seen = new Set(); let cur = id; while (cur !== undefined) { const n = byId.get(cur); const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-1)}:${n.callFrame.lineNumber}`; if (!seen.has(k)) { seen.add(k); incl.set(k, (incl.get(k) ?? 0) + c) } cur = parent.get(cur) } }
console.log('--- inclusive'); console.log([...incl].sort((a, b) => b[1] - a[1]).slice(0, 70).map(([k, c]) => `${(100 * c / total).toFixed(1)}% ${k}`).join('\n'))
await server.close(); process.exit(0)
