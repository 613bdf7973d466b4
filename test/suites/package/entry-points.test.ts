/**
 * Subpath exports by door: what each entry point loads. The root (core + providers) must load neither a web
 * framework, nor the SDK, nor the gateway's YAML parser, MiniSearch or a database driver; the Fastify door none of
 * the runtime's or the gateway's packages. Each entry is imported in a fresh process that records resolutions.
 */
import t from 'tap'
import { pathToFileURL } from 'node:url'
import { packageOf, packagesLoaded } from '../../fixtures/load-recorder.js'
import { CHILD_EXEC_ARGV, ROOT } from '../../fixtures/gateway-process.js'

// Each child loads the sources through tap's TypeScript loader, which takes a while on a busy machine.
t.setTimeout(120_000)

/** A library entry's source, or the app's (src/gateway.ts). */
const entry = (name: string) => pathToFileURL(name === 'gateway' ? `${ROOT}src/gateway.ts` : `${ROOT}packages/a2a-converse/src/${name}.ts`).href

t.test('packageOf names the package of a node_modules URL (scoped, nested) and nothing else', async (t) => {
  t.equal(packageOf('file:///a/node_modules/ajv/dist/ajv.js'), 'ajv')
  t.equal(packageOf('file:///a/node_modules/@a2a-js/sdk/dist/index.js'), '@a2a-js/sdk')
  t.equal(packageOf('file:///a/node_modules/x/node_modules/cookie/index.js'), 'cookie')
  t.equal(packageOf('file:///a/src/index.ts'), undefined)
  t.equal(packageOf('node:fs'), undefined)
})

t.test('the root entry loads ajv and nothing else', async (t) => {
  const report = await packagesLoaded({ execArgv: CHILD_EXEC_ARGV, cwd: ROOT, ownDir: ROOT, specifiers: [entry('index')] })
  t.equal(report.code, 0, report.stderr)
  t.same(report.packages, ['ajv'])
})

t.test('the core entry loads ajv and nothing else either', async (t) => {
  const report = await packagesLoaded({ execArgv: CHILD_EXEC_ARGV, cwd: ROOT, ownDir: ROOT, specifiers: [entry('core')] })
  t.equal(report.code, 0, report.stderr)
  t.same(report.packages, ['ajv'])
})

t.test('the Fastify door loads its plugin helpers and the SDK, not the MCP SDK, the runtime, the gateway or a database driver', async (t) => {
  const report = await packagesLoaded({ execArgv: CHILD_EXEC_ARGV, cwd: ROOT, ownDir: ROOT, specifiers: [entry('fastify')] })
  t.equal(report.code, 0, report.stderr)
  t.ok(report.packages.includes('fastify-plugin'), report.packages.join(', '))
  t.ok(report.packages.includes('@a2a-js/sdk'))
  for (const heavy of ['yaml', 'minisearch', 'pg', 'kysely', 'env-schema', '@modelcontextprotocol/server']) {
    t.notOk(report.packages.includes(heavy), `no ${heavy}`)
  }
})

t.test('the Express door loads express and the SDK, not Fastify, the runtime, the gateway or a database driver', async (t) => {
  const report = await packagesLoaded({ execArgv: CHILD_EXEC_ARGV, cwd: ROOT, ownDir: ROOT, specifiers: [entry('express')] })
  t.equal(report.code, 0, report.stderr)
  t.ok(report.packages.includes('express'), report.packages.join(', '))
  t.ok(report.packages.includes('@a2a-js/sdk'))
  for (const heavy of ['fastify', 'fastify-plugin', '@fastify/error', 'yaml', 'minisearch', 'pg', 'kysely', 'env-schema']) {
    t.notOk(report.packages.includes(heavy), `no ${heavy}`)
  }
})

t.test('the service entry loads the SDK and no web framework, runtime or database driver', async (t) => {
  const report = await packagesLoaded({ execArgv: CHILD_EXEC_ARGV, cwd: ROOT, ownDir: ROOT, specifiers: [entry('service')] })
  t.equal(report.code, 0, report.stderr)
  t.ok(report.packages.includes('@a2a-js/sdk'), report.packages.join(', '))
  for (const heavy of ['fastify', 'fastify-plugin', 'express', 'yaml', 'minisearch', 'pg', 'kysely']) {
    t.notOk(report.packages.includes(heavy), `no ${heavy}`)
  }
})

t.test('the MCP entry loads the MCP SDK, not Express', async (t) => {
  const report = await packagesLoaded({ execArgv: CHILD_EXEC_ARGV, cwd: ROOT, ownDir: ROOT, specifiers: [entry('mcp')] })
  t.equal(report.code, 0, report.stderr)
  t.ok(report.packages.includes('@modelcontextprotocol/server'), report.packages.join(', '))
  t.notOk(report.packages.includes('express'))
})

t.test('only the PostgreSQL entry loads pg and Kysely, and PGlite only when an embedded database opens', async (t) => {
  const runtime = await packagesLoaded({ execArgv: CHILD_EXEC_ARGV, cwd: ROOT, ownDir: ROOT, specifiers: [entry('runtime'), entry('gateway')] })
  t.equal(runtime.code, 0, runtime.stderr)
  t.ok(runtime.packages.includes('minisearch'))
  t.notOk(runtime.packages.includes('pg'))
  t.notOk(runtime.packages.includes('kysely'))
  const postgres = await packagesLoaded({ execArgv: CHILD_EXEC_ARGV, cwd: ROOT, ownDir: ROOT, specifiers: [entry('postgres')] })
  t.equal(postgres.code, 0, postgres.stderr)
  t.ok(postgres.packages.includes('pg'))
  t.ok(postgres.packages.includes('kysely'))
  t.notOk(postgres.packages.includes('@electric-sql/pglite'), postgres.packages.join(', '))
})

t.test('only the gRPC entry loads grpc-js: the gateway loads it when GRPC_PORT turns the listener on', async (t) => {
  const gateway = await packagesLoaded({ execArgv: CHILD_EXEC_ARGV, cwd: ROOT, ownDir: ROOT, specifiers: [entry('gateway'), entry('service'), entry('fastify')] })
  t.equal(gateway.code, 0, gateway.stderr)
  t.notOk(gateway.packages.includes('@grpc/grpc-js'), gateway.packages.join(', '))
  const grpc = await packagesLoaded({ execArgv: CHILD_EXEC_ARGV, cwd: ROOT, ownDir: ROOT, specifiers: [entry('grpc')] })
  t.equal(grpc.code, 0, grpc.stderr)
  t.ok(grpc.packages.includes('@grpc/grpc-js'))
  t.ok(grpc.packages.includes('@a2a-js/sdk'))
})
