/**
 * The package as users get it: `npm pack` (its prepack builds dist/), the tarball installed into a scratch project
 * outside this repository with `npm install <tarball>`, a TypeScript consumer type-checked with the repo's own
 * compiler against the installed declarations, then run on a real port; the gateway started from the installed
 * files, and the project's own v2 MCP client (mcp-client.ts) connected to its MCP door; the root entry's loads checked
 * on the built files. One app per door: a door adds an entry to CONSUMER_APPS.
 */
import t, { type Test } from 'tap'
import { execFile, spawn } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { packagesLoaded } from '../fixtures/load-recorder.js'
import { ROOT } from '../fixtures/gateway-process.js'
import { SEED_BODY, SEED_HEADERS, URI } from '../fixtures/gateway-helpers.js'

// Packing builds the package (tsc), the install resolves ~75 packages from npm's cache, and the consumer's
// type check reads every declaration it uses (skipLibCheck off): about a minute on an idle 2-core machine, and
// several when the other test files run next to it. Bounded by this timeout and each command's own.
t.setTimeout(600_000)

const run = promisify(execFile)
const FIXTURES = join(ROOT, 'test', 'package', 'consumer')
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')).packages
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
/** What the consumer installs next to the tarball, at the versions this repository tests with. */
const locked = (name: string) => `${name}@${lock[`node_modules/${name}`].version as string}`

interface ConsumerApp {
  door: string
  /** A .ts file in test/package/consumer/, compiled with the others; it prints `listening <url>` and serves. */
  file: string
  /** What the app needs besides the tarball (npm specs). */
  dependencies: string[]
}

const CONSUMER_APPS: ConsumerApp[] = [
  { door: 'fastify', file: 'fastify-app.ts', dependencies: [locked('fastify'), locked('@a2a-js/sdk')] },
  // express is an optional peer dependency: the app installs it (and its types, for the type check).
  { door: 'express', file: 'express-app.ts', dependencies: [locked('express'), locked('@types/express'), locked('@a2a-js/sdk')] }
]

const scratch = mkdtempSync(join(tmpdir(), 'a2a-converse-consumer-'))
t.teardown(() => rmSync(scratch, { recursive: true, force: true }))
const consumer = join(scratch, 'consumer')
const installed = join(consumer, 'node_modules', 'a2a-converse')

function npm (args: string[], cwd: string) {
  return run('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline'], { cwd, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 })
}

/** Starts `node <args>` in the consumer project and resolves with the URL it prints (`listening <url>` or pino's). */
function serve (t: Test, args: string[], env: Record<string, string> = {}): Promise<string> {
  const child = spawn(process.execPath, args, { cwd: consumer, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { child.kill('SIGKILL') })
  let output = ''
  return new Promise((resolve, reject) => {
    const look = (chunk: string) => {
      output += chunk
      const found = /listening (http:\/\/\S+)|Server listening at (http:\/\/[^"\s]+)/.exec(output)
      if (found !== null) resolve(found[1] ?? found[2])
    }
    child.stdout.setEncoding('utf8').on('data', look)
    child.stderr.setEncoding('utf8').on('data', look)
    child.once('exit', (code) => reject(new Error(`exited with ${code} before listening: ${output}`)))
  })
}

t.test('npm pack ships the built package, the demo agent and the documents, nothing else', async (t) => {
  const { stdout } = await npm(['pack', '--json', '--pack-destination', scratch], ROOT)
  const [packed] = JSON.parse(stdout) as Array<{ filename: string, files: Array<{ path: string }> }>
  const paths = packed.files.map((file) => file.path)
  t.ok(existsSync(join(scratch, packed.filename)), 'the tarball')
  for (const expected of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'examples/demo/agent.json', 'dist/plugins/health.js',
    'dist/web/inbox/inbox.js', 'web/inbox/index.html', 'web/inbox/inbox.css']) {
    t.ok(paths.includes(expected), expected)
  }
  for (const target of Object.values(manifest.exports as Record<string, string | Record<string, string>>)) {
    for (const file of typeof target === 'string' ? [target] : Object.values(target)) {
      t.ok(paths.includes(file.replace(/^\.\//, '')), `exported ${file}`)
    }
  }
  t.same(paths.filter((path) => !/^(dist\/(src|plugins)\/.*\.(js|d\.ts)|dist\/web\/inbox\/inbox\.js|web\/inbox\/(index\.html|inbox\.css)|examples\/demo\/.*|package\.json|README\.md|LICENSE|CHANGELOG\.md)$/.test(path)), [],
    'no sources, tests, source maps, bench or deploy files')

  mkdirSync(consumer)
  const pkg: Record<string, unknown> = { name: 'consumer', private: true, type: 'module' }
  // On Node 20 the override docs/library.md gives keeps npm from warning about cookie 2 (Node >= 22) under Fastify.
  if (Number(process.versions.node.split('.')[0]) < 22) pkg.overrides = manifest.overrides
  writeFileSync(join(consumer, 'package.json'), JSON.stringify(pkg, null, 2))
  const dependencies = [...new Set(CONSUMER_APPS.flatMap((app) => app.dependencies))]
  // The v2 MCP client for mcp-client.ts, at the version the conformance tests use.
  const install = await npm(['install', join(scratch, packed.filename), ...dependencies, locked('@types/node'), locked('@modelcontextprotocol/client')], consumer)
  t.notMatch(install.stdout + install.stderr, /EBADENGINE/, 'no engine warnings')
  t.equal(JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).version, manifest.version)
})

t.test('the consumer type-checks against the installed declarations (repo TypeScript, strict, skipLibCheck off)', async (t) => {
  for (const file of readdirSync(FIXTURES)) copyFileSync(join(FIXTURES, file), join(consumer, file))
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
  const result = await run(process.execPath, [tsc, '-p', consumer], { cwd: consumer, timeout: 300_000 }).catch((error) => error)
  // A tsc the timeout killed has no exit code (null, with a signal): that is a failure, not a pass.
  const outcome = result instanceof Error ? ((result as { killed?: boolean }).killed === true ? 'killed by the timeout' : (result as { code?: unknown }).code) : 0
  t.equal(outcome, 0, `${result.stdout as string}${result.stderr as string}`)
  for (const app of CONSUMER_APPS) t.ok(existsSync(join(consumer, 'dist', app.file.replace(/\.ts$/, '.js'))), app.file)
})

for (const app of CONSUMER_APPS) {
  t.test(`the ${app.door} app: SendMessage with the extension on a real port gets the envelope and the echo header`, async (t) => {
    const base = await serve(t, [join('dist', app.file.replace(/\.ts$/, '.js'))])
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } }
    })
    const response = await fetch(`${base}/a2a/echo`, { method: 'POST', headers: SEED_HEADERS, body })
    t.equal(response.status, 200)
    t.equal(response.headers.get('a2a-extensions'), URI)
    const reply = await response.json() as Record<string, any>
    t.equal(reply.result.message.parts[0].text, 'echo: hi')
    t.same(reply.result.message.metadata[URI].answerCoverage, { availability: 'assessed', coverage: 'answered', reason: 'sufficient_evidence' })

    const { 'A2A-Extensions': _omitted, ...plain } = SEED_HEADERS
    const without = await (await fetch(`${base}/a2a/echo`, { method: 'POST', headers: plain, body })).json() as Record<string, any>
    t.equal(without.result.message.metadata, undefined, 'no envelope without the header')
  })
}

t.test('the gateway runs from the installed files: the demo agent answers the README curl', async (t) => {
  const base = await serve(t, [join(installed, 'dist', 'src', 'gateway', 'main.js')], { HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' })
  const response = await fetch(`${base}/a2a/demo`, { method: 'POST', headers: SEED_HEADERS, body: SEED_BODY })
  const reply = await response.json() as Record<string, any>
  t.match(reply.result.message.parts[0].text, /30 days of delivery/)
  t.equal(reply.result.message.metadata[URI].citations[0].title, 'Returns policy')

  // The project's v2 MCP client at the URL the card names: 2026-07-28, the tools, ask_agent's envelope.
  const card = await (await fetch(`${base}/a2a/demo/.well-known/agent-card.json`)).json() as Record<string, any>
  const mcpUrl = card.capabilities.extensions.find((entry: Record<string, any>) => entry.uri === URI).params.mcp.url as string
  const { stdout } = await run(process.execPath, [join('dist', 'mcp-client.js'), mcpUrl], { cwd: consumer, timeout: 60_000 })
  const mcp = JSON.parse(stdout) as Record<string, any>
  t.equal(mcp.revision, '2026-07-28')
  t.equal(mcp.tools[0], 'ask_agent')
  t.match(mcp.reply.content[0].text, /30 days of delivery/)
  t.equal(mcp.reply.structuredContent.citations[0].title, 'Returns policy')
})

t.test('the gateway serves the inbox page from the installed files', async (t) => {
  const base = await serve(t, [join(installed, 'dist', 'src', 'gateway', 'main.js')], {
    HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', OPERATOR_API_KEY: 'operator-key-0123456789'
  })
  for (const [path, type] of [['/inbox', 'text/html'], ['/inbox/inbox.css', 'text/css'], ['/inbox/inbox.js', 'text/javascript']]) {
    const response = await fetch(`${base}${path}`)
    t.equal(response.status, 200, path)
    t.match(response.headers.get('content-type'), type, path)
  }
})

t.test('the installed root entry loads ajv only; the Fastify and Express entries no YAML, MiniSearch or pg', async (t) => {
  const root = await packagesLoaded({ cwd: consumer, ownDir: installed, specifiers: ['a2a-converse'] })
  t.equal(root.code, 0, root.stderr)
  t.same(root.packages, ['ajv'])
  const door = await packagesLoaded({ cwd: consumer, ownDir: installed, specifiers: ['a2a-converse/fastify'] })
  t.equal(door.code, 0, door.stderr)
  t.same(door.packages.filter((name) => ['yaml', 'minisearch', 'pg', 'kysely', 'env-schema'].includes(name)), [])
  const express = await packagesLoaded({ cwd: consumer, ownDir: installed, specifiers: ['a2a-converse/express'] })
  t.equal(express.code, 0, express.stderr)
  t.same(express.packages.filter((name) => ['fastify', 'fastify-plugin', 'yaml', 'minisearch', 'pg', 'kysely', 'env-schema'].includes(name)), [])
})
