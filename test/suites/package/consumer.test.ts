/**
 * The library as users get it: `npm pack` of packages/a2a-converse (its prepack builds dist/), the tarball installed
 * into scratch projects outside this repository. With fastify alone: the install measured (≤ 45 MB and ≤ 80 packages
 * in node_modules), every entry whose optional peer is missing refused at import with one line naming what to
 * install, and the converse plugin answering a SendMessage with the envelope on a real port. With express alone: the
 * install measured, the Express entry naming the MCP SDK it serves the MCP door with, then with it installed the
 * router answering A2A and the project's own v2 MCP client. A TypeScript consumer of both doors type-checked with the
 * repo's own compiler against the installed declarations (skipLibCheck off). Figures: docs/library.md.
 */
import t, { type Test } from 'tap'
import { execFile, spawn } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { packagesLoaded } from '../../fixtures/load-recorder.js'
import { ROOT } from '../../fixtures/gateway-process.js'
import { SEED_HEADERS, URI } from '../../fixtures/gateway-helpers.js'
import { holdLibraryBuild } from '../../fixtures/library-build-lock.js'

// Packing builds the library (tsc -b), each install resolves its packages from npm's cache, and the consumer's type
// check reads every declaration it uses (skipLibCheck off): a minute or two on an idle 2-core machine, several when
// the other test files run next to it. Bounded by this timeout and each command's own.
t.setTimeout(900_000)

const run = promisify(execFile)
const LIBRARY = join(ROOT, 'packages', 'a2a-converse')
const FIXTURES = join(ROOT, 'test', 'suites', 'package', 'consumer')
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')).packages
const rootManifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
const manifest = JSON.parse(readFileSync(join(LIBRARY, 'package.json'), 'utf8'))
/** An npm spec at the version this repository tests with. */
const locked = (name: string) => `${name}@${lock[`node_modules/${name}`].version as string}`

/** The promise of docs/library.md: the library with Fastify alone installs within these. */
const MAX_FASTIFY_INSTALL_BYTES = 45 * 1024 * 1024
const MAX_FASTIFY_INSTALL_PACKAGES = 80

const scratch = mkdtempSync(join(tmpdir(), 'a2a-converse-consumer-'))
t.teardown(() => rmSync(scratch, { recursive: true, force: true }))
let tarball = ''

function npm (args: string[], cwd: string) {
  return run('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline'], { cwd, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 })
}

/** A new project folder with a package.json of an ES module app. */
function project (name: string): string {
  const dir = join(scratch, name)
  mkdirSync(dir)
  const pkg: Record<string, unknown> = { name, private: true, type: 'module' }
  // On Node 20 the override docs/library.md gives keeps npm from warning about cookie 2 (Node >= 22) under Fastify.
  if (Number(process.versions.node.split('.')[0]) < 22) pkg.overrides = rootManifest.overrides
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2))
  return dir
}

/**
 * What node_modules takes on disk (allocated blocks, as `du` counts: more than the files' bytes) and the number of
 * installed packages (folders with a package.json naming one).
 */
function footprint (dir: string): { bytes: number, packages: number } {
  let bytes = 0
  let packages = 0
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name)
      if (entry.isSymbolicLink()) continue
      if (entry.isDirectory()) {
        if (folder.endsWith('node_modules') || folder.includes('/node_modules/@')) {
          try {
            if (typeof JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')).name === 'string') packages++
          } catch {}
        }
        walk(path)
      } else bytes += statSync(path).blocks * 512
    }
  }
  walk(join(dir, 'node_modules'))
  return { bytes, packages }
}

/** Starts `node <args>` in `cwd` and resolves with the URL it prints (`listening <url>`). */
function serve (t: Test, cwd: string, args: string[]): Promise<string> {
  const child = spawn(process.execPath, args, { cwd, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { child.kill('SIGKILL') })
  let output = ''
  return new Promise((resolve, reject) => {
    const look = (chunk: string) => {
      output += chunk
      const found = /listening (http:\/\/\S+)/.exec(output)
      if (found !== null) resolve(found[1])
    }
    child.stdout.setEncoding('utf8').on('data', look)
    child.stderr.setEncoding('utf8').on('data', look)
    child.once('exit', (code) => reject(new Error(`exited with ${code} before listening: ${output}`)))
  })
}

/** What importing `specifier` in `cwd` prints on stderr, and its exit code. */
async function importIn (cwd: string, specifier: string): Promise<{ code: number, stderr: string }> {
  const result = await run(process.execPath, ['--input-type=module', '-e', `await import(${JSON.stringify(specifier)})`], { cwd, timeout: 60_000 })
    .then(() => ({ code: 0, stderr: '' }), (error) => ({ code: error.code as number, stderr: error.stderr as string }))
  return result
}

/** SendMessage with the extension on: the echo agent's reply carries the envelope and the echo header; without, none. */
async function assertEnvelope (t: Test, base: string) {
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
}

t.test('npm pack ships the built library and its documents, nothing else', async (t) => {
  // The pack's prepack removes and rebuilds dist/, which the differential suite's built gateway imports.
  await holdLibraryBuild(t)
  const { stdout } = await npm(['pack', '--json', '--pack-destination', scratch], LIBRARY)
  const [packed] = JSON.parse(stdout) as Array<{ filename: string, files: Array<{ path: string }> }>
  tarball = join(scratch, packed.filename)
  const paths = packed.files.map((file) => file.path)
  t.ok(existsSync(tarball), 'the tarball')
  for (const expected of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md']) t.ok(paths.includes(expected), expected)
  for (const target of Object.values(manifest.exports as Record<string, string | Record<string, string>>)) {
    const files = typeof target === 'string' ? [target] : Object.entries(target).filter(([condition]) => condition !== 'a2a-converse-source').map(([, file]) => file)
    for (const file of files) t.ok(paths.includes(file.replace(/^\.\//, '')), `exported ${file}`)
  }
  t.same(paths.filter((path) => !/^(dist\/.*\.(js|d\.ts)|package\.json|README\.md|LICENSE|CHANGELOG\.md)$/.test(path)), [],
    'no sources, tests, source maps, the app, bench or deploy files')
})

t.test('the consumer type-checks against the installed declarations (repo TypeScript, strict, skipLibCheck off)', async (t) => {
  const dir = project('typed')
  await npm(['install', tarball, locked('fastify'), locked('express'), locked('@types/express'), locked('@types/node'),
    locked('@modelcontextprotocol/server'), locked('@modelcontextprotocol/client')], dir)
  for (const file of readdirSync(FIXTURES)) copyFileSync(join(FIXTURES, file), join(dir, file))
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
  const result = await run(process.execPath, [tsc, '-p', dir], { cwd: dir, timeout: 300_000 }).catch((error) => error)
  // A tsc the timeout killed has no exit code (null, with a signal): that is a failure, not a pass.
  const outcome = result instanceof Error ? ((result as { killed?: boolean }).killed === true ? 'killed by the timeout' : (result as { code?: unknown }).code) : 0
  t.equal(outcome, 0, `${result.stdout as string}${result.stderr as string}`)
  for (const file of ['fastify-app.js', 'express-app.js', 'mcp-client.js']) t.ok(existsSync(join(dir, 'dist', file)), file)
})

t.test('with fastify alone: a light install, a missing peer named at import, SendMessage with the envelope', async (t) => {
  const dir = project('fastify-alone')
  const install = await npm(['install', tarball, locked('fastify')], dir)
  t.notMatch(install.stdout + install.stderr, /EBADENGINE|ERESOLVE/, 'no engine or peer warnings')
  const { bytes, packages } = footprint(dir)
  t.comment(`fastify alone: ${(bytes / 1024 / 1024).toFixed(1)} MB in ${packages} packages`)
  t.ok(bytes <= MAX_FASTIFY_INSTALL_BYTES, `${bytes} bytes ≤ 45 MB`)
  t.ok(packages <= MAX_FASTIFY_INSTALL_PACKAGES, `${packages} packages ≤ 80`)
  for (const absent of ['@electric-sql/pglite', 'pg', 'kysely', '@grpc/grpc-js', '@modelcontextprotocol/server', 'express', '@opentelemetry/sdk-trace-node', 'ioredis']) {
    t.notOk(existsSync(join(dir, 'node_modules', absent)), `${absent} not installed`)
  }

  for (const [specifier, line] of [
    ['a2a-converse/express', 'a2a-converse/express needs express and @modelcontextprotocol/server: npm install express @modelcontextprotocol/server'],
    ['a2a-converse/grpc', 'a2a-converse/grpc needs @grpc/grpc-js and @bufbuild/protobuf: npm install @grpc/grpc-js @bufbuild/protobuf'],
    ['a2a-converse/postgres', 'a2a-converse/postgres needs pg and kysely: npm install pg kysely'],
    ['a2a-converse/mcp', 'the MCP door (a2a-converse/mcp, a2a-converse/express) needs @modelcontextprotocol/server: npm install @modelcontextprotocol/server']
  ]) {
    const { code, stderr } = await importIn(dir, specifier)
    t.not(code, 0, `${specifier} fails to import`)
    t.match(stderr, `MissingPeerError: ${line}\n`, `${specifier}: one line naming what to install`)
  }
  for (const specifier of ['a2a-converse', 'a2a-converse/fastify', 'a2a-converse/service', 'a2a-converse/runtime', 'a2a-converse/push']) {
    t.same(await importIn(dir, specifier), { code: 0, stderr: '' }, `${specifier} loads`)
  }

  copyFileSync(join(scratch, 'typed', 'dist', 'fastify-app.js'), join(dir, 'fastify-app.js'))
  await assertEnvelope(t, await serve(t, dir, ['fastify-app.js']))
})

t.test('with express alone, then the MCP SDK: the figures, the peer named, A2A and MCP served', async (t) => {
  const dir = project('express-alone')
  await npm(['install', tarball, locked('express')], dir)
  const { bytes, packages } = footprint(dir)
  t.comment(`express alone: ${(bytes / 1024 / 1024).toFixed(1)} MB in ${packages} packages`)
  t.notOk(existsSync(join(dir, 'node_modules', 'fastify')), 'no Fastify for an Express user')
  const { stderr } = await importIn(dir, 'a2a-converse/express')
  t.match(stderr, 'MissingPeerError: a2a-converse/express needs @modelcontextprotocol/server: npm install @modelcontextprotocol/server\n', 'the router serves the MCP door: its SDK named')

  await npm(['install', locked('@modelcontextprotocol/server')], dir)
  const withMcp = footprint(dir)
  t.comment(`express and the MCP SDK: ${(withMcp.bytes / 1024 / 1024).toFixed(1)} MB in ${withMcp.packages} packages`)
  copyFileSync(join(scratch, 'typed', 'dist', 'express-app.js'), join(dir, 'express-app.js'))
  const base = await serve(t, dir, ['express-app.js'])
  await assertEnvelope(t, base)

  // The project's v2 MCP client at the URL the card names: the current revision, ask_agent, its envelope.
  const card = await (await fetch(`${base}/a2a/echo/.well-known/agent-card.json`)).json() as Record<string, any>
  const mcpUrl = card.capabilities.extensions.find((entry: Record<string, any>) => entry.uri === URI).params.mcp.url as string
  const { stdout } = await run(process.execPath, [join(scratch, 'typed', 'dist', 'mcp-client.js'), mcpUrl, 'hello'], { cwd: join(scratch, 'typed'), timeout: 60_000 })
  const mcp = JSON.parse(stdout) as Record<string, any>
  t.equal(mcp.revision, '2026-07-28')
  t.equal(mcp.tools[0], 'ask_agent')
  t.equal(mcp.reply.content[0].text, 'echo: hello')
  t.same(mcp.reply.structuredContent.answerCoverage, { availability: 'assessed', coverage: 'answered', reason: 'sufficient_evidence' })
})

t.test('the installed root entry loads ajv only; the Fastify and Express entries no YAML, MiniSearch or pg', async (t) => {
  const dir = join(scratch, 'typed')
  const installed = join(dir, 'node_modules', 'a2a-converse')
  const root = await packagesLoaded({ cwd: dir, ownDir: installed, specifiers: ['a2a-converse'] })
  t.equal(root.code, 0, root.stderr)
  t.same(root.packages, ['ajv'])
  const door = await packagesLoaded({ cwd: dir, ownDir: installed, specifiers: ['a2a-converse/fastify'] })
  t.equal(door.code, 0, door.stderr)
  t.same(door.packages.filter((name) => ['yaml', 'minisearch', 'pg', 'kysely', 'env-schema', '@modelcontextprotocol/server'].includes(name)), [])
  const express = await packagesLoaded({ cwd: dir, ownDir: installed, specifiers: ['a2a-converse/express'] })
  t.equal(express.code, 0, express.stderr)
  t.same(express.packages.filter((name) => ['fastify', 'fastify-plugin', 'yaml', 'minisearch', 'pg', 'kysely', 'env-schema'].includes(name)), [])
})
