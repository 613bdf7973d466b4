/**
 * Start-up errors that name their cause (a missing documents folder, an unreachable DATABASE_URL, an invalid
 * LOG_LEVEL), the --help text, the cards' URLs logged at start and the migrations' log lines.
 */
import t from 'tap'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { readFileSync } from 'node:fs'
import { buildGateway } from '../../src/gateway/app.js'
import { ConfigError, configSchema, loadConfig } from '../../src/gateway/config.js'
import { DocumentsFolderError } from '../../src/gateway/executors.js'
import { helpText, VARIABLE_HELP, wantsHelp } from '../../src/gateway/help.js'
import { DatabaseUnreachableError } from '../../src/gateway/postgres-state.js'
import { cardUrls } from '../../src/gateway/card-urls.js'
import { logLines } from '../fixtures/gateway-helpers.js'
import { ROOT } from '../fixtures/gateway-process.js'
import { testSchema } from '../fixtures/test-schema.js'
import { inMemoryUnlessDatabase } from '../fixtures/state-env.js'

const agent = { id: 'shop', name: 'Shop', description: 'Answers shop questions.' }

async function startFailure (env: Record<string, string>): Promise<Error> {
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', ...inMemoryUnlessDatabase(env) })
  return buildGateway({ config }).then(async (app) => { await app.close(); throw new Error('it started') }, (error: Error) => error)
}

t.test('a missing documents folder names the agent, the folder and how it is resolved (both executors)', async (t) => {
  const dir = t.testdir({
    'missing.json': JSON.stringify({ ...agent, documents: './nope' }),
    'file.json': JSON.stringify({ ...agent, executor: 'knowledge', documents: './file.json' }),
    'bad.json': JSON.stringify({ ...agent, documents: './bad' }),
    bad: { 'broken.md': 'no front matter' }
  })
  const missing = await startFailure({ AGENTS_FILE: join(dir, 'missing.json') })
  t.ok(missing instanceof DocumentsFolderError)
  t.equal(missing.message, `agent "shop": documents folder ${join(dir, 'nope')} is missing or not a folder (ENOENT); ` +
    '"documents" in the agents file is a folder of Markdown files, relative to the agents file\'s own folder')
  const file = await startFailure({ AGENTS_FILE: join(dir, 'file.json') })
  t.match(file.message, /^agent "shop": documents folder .*file\.json is missing or not a folder \(ENOTDIR\)/)
  const bad = await startFailure({ AGENTS_FILE: join(dir, 'bad.json') })
  t.match(bad, { name: 'KnowledgeBaseError', message: /broken\.md: missing front matter/ }, 'other document errors pass as they are')
})

t.test('an invalid LOG_LEVEL lists the allowed values', async (t) => {
  t.throws(() => loadConfig({ LOG_LEVEL: 'loud' }), new ConfigError('LOG_LEVEL', 'must be one of fatal, error, warn, info, debug, trace, silent'))
})

t.test('an unreachable database at start names DATABASE_URL and the host, never the password', async (t) => {
  // A port that was free a moment ago: connecting is refused at once.
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  const error = await startFailure({ DATABASE_URL: `postgres://converse:s3cret@127.0.0.1:${port}/converse` })
  t.ok(error instanceof DatabaseUnreachableError)
  t.equal(error.message, `DATABASE_URL: PostgreSQL at 127.0.0.1:${port} is unreachable (ECONNREFUSED); start the server or fix DATABASE_URL`)
  t.notMatch(error.message, 's3cret')
})

t.test("the unreachable message's host and reason in every shape the driver reports", async (t) => {
  const refused = Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED' })
  t.match(new DatabaseUnreachableError('postgres:///db', new AggregateError([refused])).message,
    /^DATABASE_URL: PostgreSQL at the default host is unreachable \(ECONNREFUSED\)/)
  t.match(new DatabaseUnreachableError('postgres://h:5/db', new Error('Connection terminated unexpectedly')).message,
    /at h:5 is unreachable \(Connection terminated unexpectedly\)/)
  t.match(new DatabaseUnreachableError('postgres://[bad', refused).message, /at the configured host is unreachable/)
})

t.test('--help lists every variable with its default; docs/configuration.md lists the same variables', async (t) => {
  t.ok(wantsHelp(['--help']))
  t.ok(wantsHelp(['-h']))
  t.notOk(wantsHelp([]))
  const text = helpText()
  t.match(text, /^a2a-converse gateway/)
  t.match(text, /npm start -- --help/)
  t.same(Object.keys(VARIABLE_HELP).sort(), Object.keys(configSchema.properties).sort())
  t.match(text, /\n {2}PORT +listen port \(default 8080\)\n/)
  t.match(text, /\n {2}DATABASE_URL +postgres:\/\/… [^\n]*default: none \(embedded\)\n/, 'no default printed when there is none')
  const reference = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8')
  for (const variable of Object.keys(VARIABLE_HELP)) t.match(reference, `| \`${variable}\` |`, `docs/configuration.md documents ${variable}`)
  const documented = [...reference.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((match) => match[1]).sort()
  // OTEL_* are read by the tracing set-up (src/gateway/tracing-sdk.ts), not by the env schema.
  t.same(documented.filter((name) => !name.startsWith('OTEL_')), Object.keys(configSchema.properties).sort(), 'and names no variable the gateway does not read')
})

t.test("the cards' URLs: PUBLIC_URL, else the listen address (an unspecified host reads as localhost)", async (t) => {
  t.same(cardUrls(['demo', 'shop'], loadConfig({}), new URL('http://0.0.0.0:8080')), [
    'http://localhost:8080/.well-known/agent-card.json',
    'http://localhost:8080/a2a/demo/.well-known/agent-card.json',
    'http://localhost:8080/a2a/shop/.well-known/agent-card.json'
  ])
  t.same(cardUrls(['demo'], loadConfig({ PUBLIC_URL: 'https://agents.example.com/' }), new URL('http://[::]:8080')),
    ['https://agents.example.com/.well-known/agent-card.json', 'https://agents.example.com/a2a/demo/.well-known/agent-card.json'])
  t.same(cardUrls(['demo'], loadConfig({}), new URL('http://[::]:9')), ['http://localhost:9/.well-known/agent-card.json', 'http://localhost:9/a2a/demo/.well-known/agent-card.json'])
  t.equal(cardUrls([], loadConfig({}), new URL('http://127.0.0.1:9'))[0], 'http://127.0.0.1:9/.well-known/agent-card.json')
})

const url = process.env.TEST_DATABASE_URL
t.test('migrations are logged: each one applied on a new schema, then "up to date"', { skip: url === undefined ? 'TEST_DATABASE_URL not set (a PostgreSQL server: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test)' : false }, async (t) => {
  const schema = testSchema(t, url as string)
  const env = { HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', DATABASE_URL: url as string, DATABASE_SCHEMA: schema }
  const first = logLines()
  await (await buildGateway({ config: loadConfig(env), loggerStream: first.stream })).close()
  const applied = first.lines.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('migration applied: '))
  t.ok(applied.length >= 1, 'at least one migration on a new schema')
  for (const line of applied) t.match(line, { level: 30, schema, migration: /\S/ })
  t.notOk(first.lines.some((line) => line.msg === 'database schema up to date'))

  const second = logLines()
  await (await buildGateway({ config: loadConfig(env), loggerStream: second.stream })).close()
  t.same(second.lines.filter((line) => /^migration applied|^database schema/.test(line.msg)).map((line) => [line.msg, line.schema]),
    [['database schema up to date', schema]])
})
