/**
 * A2A 0.3 through translation against A2A 1.0 on one gateway (demo agent, own child process), on the same turn:
 * the seed as a 0.3 `message/send` (no A2A-Version, `kind`-discriminated parts, X-A2A-Extensions) and as the 1.0
 * `SendMessage` (A2A-Version 1.0, A2A-Extensions), both at POST /a2a/demo. Both contenders hit the same server
 * process in alternating rounds (bench/lib.ts), so the ratio is the translation's own cost: the 0.3 request mapped
 * to the 1.0 call, the 1.0 result mapped back, the echo header renamed.
 *
 * Target: 0.3 message/send ≥ 0.9× 1.0 SendMessage (issue 27).
 */
import { CONVERSE_EXTENSION_URI } from 'a2a-converse'
import { spawnServer, stopServer, checkReply, DEFAULT_CONNECTIONS } from './gateway.js'
import { SEED_HEADERS } from './gateway-servers.js'
import { ANSWER_TEXT, SEED_REQUEST, compare, pairedRatio, runOptions, type Contender, type RunOptions, type ScenarioResult } from './lib.js'

export const name = 'protocol-versions'
/** 0.3 message/send / 1.0 SendMessage. */
export const TARGET = 0.9

const seed = JSON.parse(SEED_REQUEST) as { id: number, params: { message: { messageId: string, parts: Array<{ text: string }> } } }
/** The seed in 0.3 terms. */
const V03_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: seed.id,
  method: 'message/send',
  params: { message: { kind: 'message', messageId: seed.params.message.messageId, role: 'user', parts: [{ kind: 'text', text: seed.params.message.parts[0].text }] } }
})
const V03_HEADERS = { 'content-type': 'application/json', 'x-a2a-extensions': CONVERSE_EXTENSION_URI }

/** Sends the 0.3 request once and checks the 0.3 answer, its envelope and the 0.3 echo; returns the reply's byte size. */
async function checkV03Reply (contender: Contender): Promise<number> {
  const res = await fetch(contender.url + contender.load.path, { method: 'POST', headers: contender.load.headers, body: contender.load.body })
  const text = await res.text()
  const message = (JSON.parse(text) as { result?: { kind?: string, role?: string, parts?: Array<{ kind?: string, text?: string }>, metadata?: Record<string, any> } }).result
  const envelope = message?.metadata?.[CONVERSE_EXTENSION_URI]
  const ok = res.status === 200 && res.headers.get('x-a2a-extensions') === CONVERSE_EXTENSION_URI && message?.kind === 'message' &&
    message.role === 'agent' && message.parts?.[0]?.kind === 'text' && message.parts[0].text === ANSWER_TEXT && envelope?.answerCoverage?.coverage === 'answered'
  if (!ok) throw new Error(`${contender.name}: unexpected reply (status ${res.status}): ${text.slice(0, 500)}`)
  return Buffer.byteLength(text)
}

export async function run (overrides: Partial<RunOptions> = {}): Promise<ScenarioResult> {
  const options = runOptions({ connections: DEFAULT_CONNECTIONS, ...overrides })
  const gateway = await spawnServer('gateway')
  try {
    const contenders: Contender[] = [
      {
        name: 'A2A 0.3 message/send (translated)',
        url: gateway.url,
        load: { method: 'POST', path: gateway.path, headers: V03_HEADERS, body: V03_BODY },
        usage: gateway.usage
      },
      {
        name: 'A2A 1.0 SendMessage',
        url: gateway.url,
        load: { method: 'POST', path: gateway.path, headers: { ...SEED_HEADERS }, body: SEED_REQUEST },
        usage: gateway.usage
      }
    ]
    const sizes = [await checkV03Reply(contenders[0]), await checkReply(contenders[1])]
    const rows = await compare(contenders, options)
    return {
      name,
      rows,
      ratios: [{ description: '0.3 message/send / 1.0 SendMessage', ratio: pairedRatio(rows, 0, 1), target: TARGET }],
      notes: [
        `reply bytes: 0.3 ${sizes[0]}, 1.0 ${sizes[1]}`,
        `server CPU per request (median): 0.3 ${(rows[0].cpuMicrosPerRequest as number).toFixed(1)} µs, ` +
          `1.0 ${(rows[1].cpuMicrosPerRequest as number).toFixed(1)} µs; CPU-based ratio ${pairedRatio(rows, 0, 1, true).toFixed(3)}`,
        `both versions share one gateway process; ${options.connections} connections, ${options.rounds} rounds of ${options.durationSec} s`
      ]
    }
  } finally {
    await stopServer(gateway)
  }
}
