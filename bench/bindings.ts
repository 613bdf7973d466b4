/**
 * The HTTP+JSON binding against the JSON-RPC binding of one gateway (demo agent, own child process), on the same
 * turn: the seed's SendMessage at POST /a2a/demo (JSON-RPC) and its params at POST /a2a/demo/rest/message:send
 * (HTTP+JSON), A2A-Version 1.0, the converse extension requested. Both contenders hit the same server process in
 * alternating rounds (bench/lib.ts), so the ratio is the binding's own cost: the route and its params against the
 * JSON-RPC envelope, the result written as a ProtoJSON body against a JSON-RPC response.
 *
 * Target: HTTP+JSON ≥ 0.95× JSON-RPC (issue 25).
 */
import { CONVERSE_EXTENSION_URI } from '../src/core/uri.js'
import { spawnServer, stopServer, checkReply, DEFAULT_CONNECTIONS } from './gateway.js'
import { SEED_HEADERS } from './gateway-servers.js'
import { ANSWER_TEXT, SEED_REQUEST, compare, pairedRatio, runOptions, type Contender, type RunOptions, type ScenarioResult } from './lib.js'

export const name = 'bindings'
/** HTTP+JSON SendMessage / JSON-RPC SendMessage. */
export const TARGET = 0.95

/** The seed request's params: HTTP+JSON's body is the SendMessageRequest itself. */
const REST_BODY = JSON.stringify((JSON.parse(SEED_REQUEST) as { params: unknown }).params)

/** Sends the HTTP+JSON request once and checks the answer, its envelope and the echo; returns the reply's byte size. */
async function checkRestReply (contender: Contender): Promise<number> {
  const res = await fetch(contender.url + contender.load.path, { method: 'POST', headers: contender.load.headers, body: contender.load.body })
  const text = await res.text()
  const message = (JSON.parse(text) as { message?: { role?: string, parts?: Array<{ text?: string }>, metadata?: Record<string, any> } }).message
  const envelope = message?.metadata?.[CONVERSE_EXTENSION_URI]
  const ok = res.status === 200 && res.headers.get('a2a-extensions') === CONVERSE_EXTENSION_URI && message?.role === 'ROLE_AGENT' &&
    message.parts?.[0]?.text === ANSWER_TEXT && envelope?.answerCoverage?.coverage === 'answered'
  if (!ok) throw new Error(`${contender.name}: unexpected reply (status ${res.status}): ${text.slice(0, 500)}`)
  return Buffer.byteLength(text)
}

export async function run (overrides: Partial<RunOptions> = {}): Promise<ScenarioResult> {
  const options = runOptions({ connections: DEFAULT_CONNECTIONS, ...overrides })
  const gateway = await spawnServer('gateway')
  try {
    const contenders: Contender[] = [
      {
        name: 'HTTP+JSON SendMessage (POST /a2a/demo/rest/message:send)',
        url: gateway.url,
        load: { method: 'POST', path: `${gateway.path}/rest/message:send`, headers: { ...SEED_HEADERS }, body: REST_BODY },
        usage: gateway.usage
      },
      {
        name: 'JSON-RPC SendMessage (POST /a2a/demo)',
        url: gateway.url,
        load: { method: 'POST', path: gateway.path, headers: { ...SEED_HEADERS }, body: SEED_REQUEST },
        usage: gateway.usage
      }
    ]
    const sizes = [await checkRestReply(contenders[0]), await checkReply(contenders[1])]
    const rows = await compare(contenders, options)
    return {
      name,
      rows,
      ratios: [{ description: 'HTTP+JSON / JSON-RPC SendMessage', ratio: pairedRatio(rows, 0, 1), target: TARGET }],
      notes: [
        `reply bytes: HTTP+JSON ${sizes[0]}, JSON-RPC ${sizes[1]}`,
        `server CPU per request (median): HTTP+JSON ${(rows[0].cpuMicrosPerRequest as number).toFixed(1)} µs, ` +
          `JSON-RPC ${(rows[1].cpuMicrosPerRequest as number).toFixed(1)} µs; CPU-based ratio ${pairedRatio(rows, 0, 1, true).toFixed(3)}`,
        `both bindings share one gateway process; ${options.connections} connections, ${options.rounds} rounds of ${options.durationSec} s`
      ]
    }
  } finally {
    await stopServer(gateway)
  }
}
