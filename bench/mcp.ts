/**
 * The MCP door against the A2A door of one gateway (demo agent, own child process), on the same question:
 *
 * - A2A: the seed's SendMessage at POST /a2a/demo (A2A-Version 1.0, the converse extension requested);
 * - MCP: `tools/call` of `ask_agent` with the same text at POST /mcp/a/demo, on the 2026-07-28 revision exactly as
 *   the v2 client sends it (the `_meta` envelope, MCP-Protocol-Version, Mcp-Method and Mcp-Name); answered by the
 *   door's fast path (the agent's long-lived SDK Server pinned to 2026-07-28, packages/a2a-converse/src/mcp/direct-exchange.ts), which
 *   runs a SendMessage through the A2A service;
 * - the same MCP call on a second gateway without the fast path: the v2 server SDK's own stateless handling
 *   (`createMcpHandler`: a new `Server` and per-request transport per request), to show what the fast path buys
 *   (kept only at ≥ 1.10, the rule of bench/fast-paths.ts);
 * - the same call on 2025-11-25 as the v1 client sends it after initialize, answered by the door's legacy fast path
 *   (the agent's long-lived SDK Server pinned to the 2025 era, the reply as the one-event SSE stream the SDK writes),
 *   and on the gateway without the fast path by the SDK's stateless legacy leg (a new `Server` and Streamable HTTP
 *   transport per request): the legacy fast path's worth, kept too only at ≥ 1.10.
 *
 * Target: MCP (2026-07-28) ≥ 0.7× A2A. All contenders hit the same server process in alternating rounds
 * (bench/lib.ts), so the ratio is the MCP door's own cost: the SDK's classification and JSON-RPC of MCP (zod
 * schemas), the tool result built from the A2A reply, and the door's routing and body handling.
 */
import { spawnServer, stopServer, checkReply, DEFAULT_CONNECTIONS } from './gateway.js'
import { SEED_HEADERS } from './gateway-servers.js'
import { KEEP_THRESHOLD } from './fast-paths.js'
import { ANSWER_TEXT, SEED_REQUEST, compare, pairedRatio, runOptions, type Contender, type RunOptions, type ScenarioResult } from './lib.js'

export const name = 'mcp'
/** MCP ask_agent / A2A SendMessage. */
export const TARGET = 0.7

const QUESTION = { name: 'ask_agent', arguments: { message: 'How long do I have to return an order?' } }

/** tools/call of ask_agent on 2026-07-28: the per-request envelope the v2 client attaches. */
export const ASK_REQUEST = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    ...QUESTION,
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': {}
    }
  }
})

export const MCP_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'ask_agent'
})

/** The same call on 2025-11-25, as the v1 client sends it once initialized. */
const LEGACY_REQUEST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: QUESTION })
const LEGACY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25'
})

interface ToolReply {
  result?: { isError?: boolean, content?: Array<{ text?: string }>, structuredContent?: { answerCoverage?: { coverage?: string }, citations?: unknown[] } }
}

/** Calls ask_agent once and checks the answer and its envelope; returns the reply's byte size. */
async function checkToolReply (contender: Contender): Promise<number> {
  const res = await fetch(contender.url + contender.load.path, { method: 'POST', headers: contender.load.headers, body: contender.load.body })
  const text = await res.text()
  // A JSON reply (2026-07-28), or one SSE event carrying it (the older revisions' stateless leg).
  const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '')
  const result = (JSON.parse(json) as ToolReply).result
  const ok = res.status === 200 && result?.isError === false && result.content?.[0]?.text === ANSWER_TEXT &&
    result.structuredContent?.answerCoverage?.coverage === 'answered' && result.structuredContent.citations?.length === 1
  if (!ok) throw new Error(`${contender.name}: unexpected reply (status ${res.status}): ${text.slice(0, 500)}`)
  return Buffer.byteLength(text)
}

export async function run (overrides: Partial<RunOptions> = {}): Promise<ScenarioResult> {
  const options = runOptions({ connections: DEFAULT_CONNECTIONS, ...overrides })
  const gateway = await spawnServer('gateway')
  const perRequest = await spawnServer('gateway-mcp-per-request')
  try {
    const path = '/mcp/a/demo'
    const ask = { method: 'POST' as const, path, headers: { ...MCP_HEADERS }, body: ASK_REQUEST }
    const legacy = { method: 'POST' as const, path, headers: { ...LEGACY_HEADERS }, body: LEGACY_REQUEST }
    const contenders: Contender[] = [
      { name: 'MCP tools/call ask_agent, 2026-07-28 (POST /mcp/a/demo)', url: gateway.url, load: ask, usage: gateway.usage },
      {
        name: 'A2A SendMessage (POST /a2a/demo, extension active)',
        url: gateway.url,
        load: { method: 'POST', path: gateway.path, headers: { ...SEED_HEADERS }, body: SEED_REQUEST },
        usage: gateway.usage
      },
      { name: 'MCP tools/call ask_agent, 2025-11-25 (same gateway)', url: gateway.url, load: legacy, usage: gateway.usage },
      { name: 'MCP ask_agent 2026-07-28 without the fast path (own gateway)', url: perRequest.url, load: ask, usage: perRequest.usage },
      { name: 'MCP ask_agent 2025-11-25 without the fast path (own gateway)', url: perRequest.url, load: legacy, usage: perRequest.usage }
    ]
    const sizes = [
      await checkToolReply(contenders[0]), await checkReply(contenders[1]), await checkToolReply(contenders[2]), await checkToolReply(contenders[3]),
      await checkToolReply(contenders[4])
    ]
    if (sizes[0] !== sizes[3]) throw new Error(`the fast path's reply (${sizes[0]} bytes) differs from the SDK handler's (${sizes[3]})`)
    if (sizes[2] !== sizes[4]) throw new Error(`the legacy fast path's reply (${sizes[2]} bytes) differs from the SDK handler's (${sizes[4]})`)
    const rows = await compare(contenders, options)
    return {
      name,
      rows,
      ratios: [
        { description: 'MCP ask_agent (2026-07-28) / A2A SendMessage', ratio: pairedRatio(rows, 0, 1), target: TARGET },
        { description: 'MCP fast path / the SDK\'s stateless handling (keep ≥ 1.10)', ratio: pairedRatio(rows, 0, 3), target: KEEP_THRESHOLD },
        { description: 'MCP 2025-11-25 fast path / the SDK\'s stateless handling (keep ≥ 1.10)', ratio: pairedRatio(rows, 2, 4), target: KEEP_THRESHOLD }
      ],
      notes: [
        `informative: MCP ask_agent (2025-11-25) / A2A SendMessage ${pairedRatio(rows, 2, 1).toFixed(3)}`,
        `reply bytes: MCP ${sizes[0]} (2026-07-28), ${sizes[2]} (2025-11-25, SSE), A2A ${sizes[1]}`,
        `server CPU per request (median): MCP ${(rows[0].cpuMicrosPerRequest as number).toFixed(1)} µs (2026-07-28), ` +
          `${(rows[2].cpuMicrosPerRequest as number).toFixed(1)} µs (2025-11-25), A2A ${(rows[1].cpuMicrosPerRequest as number).toFixed(1)} µs, ` +
          `MCP without the fast path ${(rows[3].cpuMicrosPerRequest as number).toFixed(1)} µs (2026-07-28), ` +
          `${(rows[4].cpuMicrosPerRequest as number).toFixed(1)} µs (2025-11-25); CPU-based ratios ` +
          `${pairedRatio(rows, 0, 1, true).toFixed(3)} (MCP / A2A), ${pairedRatio(rows, 0, 3, true).toFixed(3)} (fast path / SDK's stateless handling) ` +
          `and ${pairedRatio(rows, 2, 4, true).toFixed(3)} (2025-11-25 fast path / SDK's stateless handling)`,
        `MCP and A2A share one gateway process; ${options.connections} connections, ${options.rounds} rounds of ${options.durationSec} s`
      ]
    }
  } finally {
    await stopServer(gateway)
    await stopServer(perRequest)
  }
}
