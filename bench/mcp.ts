/**
 * The MCP door against the A2A door of one gateway (demo agent, own child process), on the same question:
 *
 * - A2A: the seed's SendMessage at POST /a2a/demo (A2A-Version 1.0, the converse extension requested);
 * - MCP: `tools/call` of `ask_agent` with the same text at POST /mcp/a/demo, as a stateless client sends it after
 *   initialize (Accept JSON and SSE, MCP-Protocol-Version); answered by the door's fast path (the agent's long-lived
 *   SDK Server, src/mcp/direct-exchange.ts), which runs a SendMessage through the A2A service;
 * - informative: the same MCP call on a second gateway without the fast path (a new SDK Server and Streamable HTTP
 *   transport per request), to show what the fast path buys (kept only at ≥ 1.10, the rule of bench/fast-paths.ts).
 *
 * Target: MCP ≥ 0.7× A2A. Both contenders hit the same server process in alternating rounds (bench/lib.ts), so
 * the ratio is the MCP door's own cost: the SDK Server's JSON-RPC of MCP (zod schemas), the tool result built from
 * the A2A reply, and the door's routing and body handling.
 */
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js'
import { spawnServer, stopServer, checkReply, DEFAULT_CONNECTIONS } from './gateway.js'
import { SEED_HEADERS } from './gateway-servers.js'
import { KEEP_THRESHOLD } from './fast-paths.js'
import { ANSWER_TEXT, SEED_REQUEST, compare, pairedRatio, runOptions, type Contender, type RunOptions, type ScenarioResult } from './lib.js'

export const name = 'mcp'
/** MCP ask_agent / A2A SendMessage. */
export const TARGET = 0.7

export const ASK_REQUEST = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'ask_agent', arguments: { message: 'How long do I have to return an order?' } }
})

export const MCP_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': LATEST_PROTOCOL_VERSION
})

interface ToolReply {
  result?: { isError?: boolean, content?: Array<{ text?: string }>, structuredContent?: { answerCoverage?: { coverage?: string }, citations?: unknown[] } }
}

/** Calls ask_agent once and checks the answer and its envelope; returns the reply's byte size. */
async function checkToolReply (contender: Contender): Promise<number> {
  const res = await fetch(contender.url + contender.load.path, { method: 'POST', headers: contender.load.headers, body: contender.load.body })
  const text = await res.text()
  const result = (JSON.parse(text) as ToolReply).result
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
    const ask = { method: 'POST' as const, path: '/mcp/a/demo', headers: { ...MCP_HEADERS }, body: ASK_REQUEST }
    const contenders: Contender[] = [
      { name: 'MCP tools/call ask_agent (POST /mcp/a/demo)', url: gateway.url, load: ask, usage: gateway.usage },
      {
        name: 'A2A SendMessage (POST /a2a/demo, extension active)',
        url: gateway.url,
        load: { method: 'POST', path: gateway.path, headers: { ...SEED_HEADERS }, body: SEED_REQUEST },
        usage: gateway.usage
      },
      { name: 'MCP ask_agent without the fast path (own gateway)', url: perRequest.url, load: ask, usage: perRequest.usage }
    ]
    const sizes = [await checkToolReply(contenders[0]), await checkReply(contenders[1]), await checkToolReply(contenders[2])]
    if (sizes[0] !== sizes[2]) throw new Error(`the fast path's reply (${sizes[0]} bytes) differs from the transport's (${sizes[2]})`)
    const rows = await compare(contenders, options)
    return {
      name,
      rows,
      ratios: [
        { description: 'MCP ask_agent / A2A SendMessage', ratio: pairedRatio(rows, 0, 1), target: TARGET },
        { description: 'MCP fast path / a new server per request (keep ≥ 1.10)', ratio: pairedRatio(rows, 0, 2), target: KEEP_THRESHOLD }
      ],
      notes: [
        `reply bytes: MCP ${sizes[0]}, A2A ${sizes[1]}`,
        `server CPU per request (median): MCP ${(rows[0].cpuMicrosPerRequest as number).toFixed(1)} µs, A2A ${(rows[1].cpuMicrosPerRequest as number).toFixed(1)} µs, ` +
          `MCP without the fast path ${(rows[2].cpuMicrosPerRequest as number).toFixed(1)} µs; CPU-based ratios ${pairedRatio(rows, 0, 1, true).toFixed(3)} ` +
          `(MCP / A2A) and ${pairedRatio(rows, 0, 2, true).toFixed(3)} (fast path / per request)`,
        `MCP and A2A share one gateway process; ${options.connections} connections, ${options.rounds} rounds of ${options.durationSec} s`
      ]
    }
  } finally {
    await stopServer(gateway)
    await stopServer(perRequest)
  }
}
