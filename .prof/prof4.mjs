import { startGateway } from '/work/wt-mcp/dist/bench/gateway-servers.js'
import { ASK_REQUEST, MCP_HEADERS } from '/work/wt-mcp/dist/bench/mcp.js'
import { SEED_HEADERS } from '/work/wt-mcp/dist/bench/gateway-servers.js'
import { SEED_REQUEST } from '/work/wt-mcp/dist/bench/lib.js'
import autocannon from 'autocannon'
const a2a = process.argv[2] === 'a2a'
const server = await startGateway(false, false)
const opts = a2a ? { url: server.url + '/a2a/demo', method: 'POST', headers: SEED_HEADERS, body: SEED_REQUEST } : { url: server.url + '/mcp/a/demo', method: 'POST', headers: MCP_HEADERS, body: ASK_REQUEST }
await autocannon({ ...opts, connections: 10, duration: 2 })
const { Session } = await import('node:inspector/promises')
const session = new Session(); session.connect()
await session.post('Profiler.enable'); await session.post('Profiler.start')
const r = await autocannon({ ...opts, connections: 10, duration: 4 })
const { profile } = await session.post('Profiler.stop')
const byId = new Map(profile.nodes.map(n => [n.id, n]))
const parent = new Map(); for (const n of profile.nodes) for (const ch of n.children ?? []) parent.set(ch, n.id)
const counts = new Map(); for (const s of profile.samples) counts.set(s, (counts.get(s) ?? 0) + 1)
let total = 0; const self = new Map()
const dt = (profile.endTime - profile.startTime) / profile.samples.length
for (const [id, c] of counts) {
  let cur = id; let isAc = false
  while (cur !== undefined) { const n = byId.get(cur); if (/autocannon|hdr-histogram|http-parser-js|reinterval|retimer/.test(n.callFrame.url)) isAc = true; cur = parent.get(cur) }
  if (isAc) continue
  const n = byId.get(id); if (n.callFrame.functionName === '(idle)') continue
  total += c
  const u = n.callFrame.url; const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u)
  const k = `${n.callFrame.functionName || '(anon)'} ${m ? m[1] : u.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`
  self.set(k, (self.get(k) ?? 0) + c)
}
console.log('requests', r.requests.total, 'server µs/request (samples)', (total * dt / r.requests.total).toFixed(1))
console.log([...self].sort((a, b) => b[1] - a[1]).slice(0, 40).map(([k, c]) => `${(c * dt / r.requests.total).toFixed(1)}µs ${k}`).join('\n'))
await server.close(); process.exit(0)
