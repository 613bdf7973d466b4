#!/usr/bin/env node
// `npm run tck`: the official A2A 1.0 conformance kit (a2a-tck, vendored outside the repo) against the gateway
// serving examples/conformance/ (docs/conformance.md). Builds, then per binding the agent's card lists (JSONRPC,
// HTTP+JSON; gRPC cannot run here, see the kit's README) starts a fresh gateway on a free port, runs the kit's
// run-kit.sh over that binding and reads its per-test lines. Exit 1 when a MUST test failed that
// test/suites/conformance/tck-allowlist.json does not name, or when a kit run broke.
//
// The kit calls as an authenticated caller: it has no option for a credential, so this script fronts the gateway
// with a proxy on another free port that adds `Authorization: Bearer <key>` to every request (the card's URLs
// name the proxy through PUBLIC_URL). A walk-in must send UUID contextIds and name one in ListTasks
// (docs/identities.md), and the kit's `tck-…` ids are not UUIDs.
//
// Env: A2A_TCK_DIR (default ../shared/conformance/a2a-tck-1.0 beside the repo); TCK_REQUIRED=1 makes a missing
// kit a failure (CI) instead of a skip; TCK_OUT (default .tck/) gets the kit's output and summary.md.
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { createServer, request as httpRequest } from 'node:http'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const kit = resolve(root, process.env.A2A_TCK_DIR ?? '../shared/conformance/a2a-tck-1.0')
const out = resolve(root, process.env.TCK_OUT ?? '.tck')
const allowlistFile = join(root, 'test/suites/conformance/tck-allowlist.json')
/** The card's protocolBinding → run-kit.sh's transport name. */
const TRANSPORTS = { JSONRPC: 'jsonrpc', 'HTTP+JSON': 'http_json' }

if (!existsSync(join(kit, 'run-kit.sh'))) {
  const message = `tck: no conformance kit at ${kit} (set A2A_TCK_DIR to the a2a-tck-1.0 folder holding run-kit.sh)`
  if (process.env.TCK_REQUIRED === '1') {
    console.error(message)
    process.exit(1)
  }
  console.log(`${message}: skipped`)
  process.exit(0)
}

const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' })
if (build.status !== 0) process.exit(1)

const key = randomBytes(24).toString('base64url')
const front = await startFront()
rmSync(out, { recursive: true, force: true })

/** The gateway with the conformance agent, fresh; resolves once it listens. */
async function startAgent () {
  const child = spawn(process.execPath, ['dist/examples/conformance/agent.js'], {
    cwd: root,
    // As deployed by default: A2A 0.3 served beside 1.0 (the card stays a valid 1.0 card; docs/protocol-versions.md).
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', STATE: 'memory', A2A_API_KEYS: `tck:${key}`, PUBLIC_URL: front.url },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const address = await new Promise((resolve, reject) => {
    let text = ''
    child.once('exit', (code) => reject(new Error(`the conformance agent exited (${code}) before it listened`)))
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      text += chunk
      const line = text.split('\n').find((candidate) => candidate.includes('"listening"'))
      if (line !== undefined) resolve(JSON.parse(line).address)
    })
  })
  child.stdout.resume()
  return {
    address,
    kill: () => child.kill('SIGKILL'),
    stop: () => new Promise((resolve) => {
      child.removeAllListeners('exit')
      child.once('exit', resolve)
      child.kill('SIGTERM')
    })
  }
}

/** A proxy on a free port adding the caller's credential; `target` is set to each fresh gateway. */
async function startFront () {
  const state = { target: undefined }
  const server = createServer((incoming, outgoing) => {
    const target = new URL(incoming.url, state.target)
    const upstream = httpRequest(target, {
      method: incoming.method,
      headers: { ...incoming.headers, host: target.host, authorization: `Bearer ${key}` }
    }, (response) => {
      outgoing.writeHead(response.statusCode, response.headers)
      response.pipe(outgoing)
    })
    upstream.on('error', () => outgoing.destroy())
    // The kit closing a stream closes it at the gateway too.
    outgoing.on('close', () => upstream.destroy())
    incoming.pipe(upstream)
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${server.address().port}`
  return { url, state, close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve) }) }
}

const allowlist = JSON.parse(readFileSync(allowlistFile, 'utf8'))
const allowed = (row, transport) => allowlist.find((entry) =>
  (entry.requirement === row.requirement || entry.test === row.nodeid.split('::').slice(1).join('::')) &&
  (entry.transports === undefined || entry.transports.includes(transport)))

let agent = await startAgent()
front.state.target = agent.address
// Whatever happens below, the gateway this script started does not outlive it.
process.once('exit', () => agent.kill())
const card = await (await fetch(`${front.url}/a2a/tck/.well-known/agent-card.json`)).json()
const bindings = [...new Set(card.supportedInterfaces.map((entry) => entry.protocolBinding))]
const transports = bindings.filter((binding) => TRANSPORTS[binding] !== undefined).map((binding) => TRANSPORTS[binding])
const untested = bindings.filter((binding) => TRANSPORTS[binding] === undefined)
if (untested.length > 0) console.log(`tck: not run by the kit here: ${untested.join(', ')} (see the kit's README)`)

let broke = false
const unexpected = []
const excused = []
const passedAllowed = new Set()
for (const [index, transport] of transports.entries()) {
  if (index > 0) {
    // A fresh server per binding: the ListTasks tests count tasks.
    await agent.stop()
    agent = await startAgent()
    front.state.target = agent.address
  }
  // Not spawnSync: the front proxy serves the kit from this process's event loop.
  const kitRun = spawn(join(kit, 'run-kit.sh'), [`${front.url}/a2a/tck`, out, transport], { stdio: 'inherit' })
  const [status] = await once(kitRun, 'exit')
  const results = join(out, 'sut', transport, 'tests.jsonl')
  if (status !== 0 || !existsSync(results)) {
    broke = true
    if (!existsSync(results)) continue
  }
  const rows = readFileSync(results, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line))
  for (const row of rows) {
    // This run's binding, and the card tests (no binding) once, from the first run (as the kit's summarize.py).
    const counted = row.transport === transport || (index === 0 && ['agent_card', 'n/a'].includes(row.transport))
    if (!counted || row.level !== 'MUST') continue
    const entry = allowed(row, transport)
    if (['failed', 'error'].includes(row.outcome)) {
      if (entry === undefined) unexpected.push({ transport, row })
      else excused.push({ transport, row, entry })
    } else if (row.outcome === 'passed' && entry !== undefined) {
      passedAllowed.add(`${entry.requirement ?? entry.test} (${transport})`)
    }
  }
}
await agent.stop()
await front.close()

console.log(`\ntck: bindings run: ${transports.join(', ')}; summary in ${join(out, 'summary.md')}`)
for (const { transport, row, entry } of excused) console.log(`tck: allowed MUST failure ${row.requirement || row.nodeid} on ${transport}: ${entry.reason}`)
for (const name of passedAllowed) console.log(`tck: ${name} is allow-listed but passed: take it off test/suites/conformance/tck-allowlist.json`)
for (const { transport, row } of unexpected) console.error(`tck: MUST failure ${row.requirement || '(no id)'} on ${transport}: ${row.nodeid}: ${row.reason.slice(0, 300)}`)
if (broke) console.error('tck: a kit run did not finish (see pytest.txt under the output folder)')
if (unexpected.length > 0 || broke) process.exit(1)
console.log('tck: no MUST failure outside the allow-list')
