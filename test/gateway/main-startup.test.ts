/** The real entry (src/gateway/main.ts) as a process: bad configuration stops it, a good one serves. */
import t from 'tap'
import { generateKeyPairSync } from 'node:crypto'
import { join } from 'node:path'
import { SEED_BODY, SEED_HEADERS, URI } from '../fixtures/gateway-helpers.js'
import { startMain, within } from '../fixtures/gateway-process.js'

const PUBLIC_PEM = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'pem', type: 'spki' }) as string

// Every test spawns the gateway through tap's TypeScript loader: allow for slow, busy machines.
t.setTimeout(300_000)

t.test('what stops the start: exit code 1 and one stderr line naming the variable, the file or the agent', async (t) => {
  // The other start failures (an unknown executor, a missing documents folder, …) take the same path through
  // main.ts; test/gateway/cards.test.ts checks their messages in-process.
  const dir = t.testdir({})
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: 'eighty' }, /^a2a-converse: invalid configuration: PORT must be integer\n$/],
    [{ AGENTS_FILE: join(dir, 'missing.yaml') }, /^a2a-converse: cannot start: AGENTS_FILE .*missing\.yaml: cannot be read \(ENOENT\)\n$/],
    // A bad signing key: what is wrong with it, never a byte of it (docs/signing.md).
    [{ SIGNING_KEY: PUBLIC_PEM }, /^a2a-converse: invalid configuration: SIGNING_KEY is a public key: the private key is needed to sign\n$/]
  ]
  // In parallel: each child loads the sources through tap's TypeScript loader, which takes a while.
  const children = cases.map(([env]) => startMain(t, env))
  const exits = await Promise.all(children.map((child) => within(child.exited, 90_000)))
  cases.forEach(([env, expected], index) => {
    const child = children[index]
    t.same(exits[index], { code: 1, signal: null }, JSON.stringify(env))
    t.match(child.stderr(), expected)
    t.equal(child.stderr().trim().split('\n').length, 1, 'one line, no stack trace')
    t.equal(child.stdout(), '', 'nothing logged: it never listened')
    t.notOk(child.stderr().includes(PUBLIC_PEM.split('\n')[1]), 'no key material')
  })
})

t.test('a normal start serves the demo agent and logs config warnings; a second one on its port stops', async (t) => {
  const child = startMain(t, { TRUST_PROXY: '2', LOG_LEVEL: 'info' })
  const base = await child.listening()
  t.match(base, /^http:\/\/127\.0\.0\.1:\d+$/)
  const warning = child.lines().find((line) => line.level === 40)
  t.match(warning?.msg, /^TRUST_PROXY=2 is a hop count, which Fastify does not trust/)

  t.same(await (await fetch(`${base}/health/live`)).json(), { status: 'ok' })
  const ready = await fetch(`${base}/health/ready`)
  t.equal(ready.status, 200)
  t.same(await ready.json(), { status: 'ready', checks: {} })

  // The seed's curl.
  const response = await fetch(`${base}/a2a/demo`, { method: 'POST', headers: SEED_HEADERS, body: SEED_BODY })
  t.equal(response.status, 200)
  t.equal(response.headers.get('a2a-extensions'), URI)
  const body = await response.json() as Record<string, any>
  t.match(body.result.message.parts[0].text, /30 days of delivery/)
  t.equal(body.result.message.metadata[URI].citations[0].title, 'Returns policy')

  const second = startMain(t, { PORT: new URL(base).port })
  t.same(await within(second.exited, 90_000), { code: 1, signal: null }, 'port in use')
  t.match(second.stderr(), /^a2a-converse: cannot start: listen EADDRINUSE/)
  t.equal((await fetch(`${base}/health/live`)).status, 200, 'the first one is unaffected')

  child.kill('SIGTERM')
  t.same(await within(child.exited, 10_000), { code: 0, signal: null })
  t.equal(child.stderr(), '')
  t.same(child.lines().filter((line) => line.level >= 50), [], 'no error lines')
  t.ok(child.lines().some((line) => line.msg === 'closed'))
})
