import { startGateway } from '/work/wt-mcp/dist/bench/gateway-servers.js'
import { ASK_REQUEST, MCP_HEADERS } from '/work/wt-mcp/dist/bench/mcp.js'
import autocannon from 'autocannon'
const server = await startGateway(false, false)
const url = server.url + '/mcp/a/demo'
await autocannon({ url, method: 'POST', headers: MCP_HEADERS, body: ASK_REQUEST, connections: 10, duration: 2 })
const { Session } = await import('node:inspector/promises')
const session = new Session(); session.connect()
await session.post('Profiler.enable'); await session.post('Profiler.start')
await autocannon({ url, method: 'POST', headers: MCP_HEADERS, body: ASK_REQUEST, connections: 10, duration: 4 })
const { profile } = await session.post('Profiler.stop')
const byId = new Map(profile.nodes.map(n => [n.id, n]))
const parent = new Map(); for (const n of profile.nodes) for (const ch of n.children ?? []) parent.set(ch, n.id)
const counts = new Map(); for (const s of profile.samples) counts.set(s, (counts.get(s) ?? 0) + 1)
let total = 0; const incl = new Map()
// attribute each sample to the first frame (from leaf) in @modelcontextprotocol whose caller is outside it: "entry into SDK"
const entry = new Map()
for (const [id, c] of counts) {
  let cur = id; let isAc = false; const chain = []
  while (cur !== undefined) { const n = byId.get(cur); if (/autocannon|hdr-histogram|http-parser-js|reinterval|retimer/.test(n.callFrame.url)) isAc = true; chain.push(n); cur = parent.get(cur) }
  if (isAc) continue
  total += c
  // outermost SDK frame directly called from non-SDK
  for (let i = chain.length - 1; i >= 0; i--) { if (chain[i].callFrame.url.includes('@modelcontextprotocol')) { const n = chain[i]; const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-1)}:${n.callFrame.lineNumber}`; entry.set(k, (entry.get(k) ?? 0) + c); break } }
  const seen = new Set()
  for (const n of chain) { if (!n.callFrame.url.includes('@modelcontextprotocol')) continue; const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-1)}:${n.callFrame.lineNumber}`; if (!seen.has(k)) { seen.add(k); incl.set(k, (incl.get(k) ?? 0) + c) } }
}
console.log('SDK inclusive (non-autocannon total', total, ')'); console.log([...incl].sort((a, b) => b[1] - a[1]).slice(0, 40).map(([k, c]) => `${(100 * c / total).toFixed(1)}% ${k}`).join('\n'))
await server.close(); process.exit(0)
