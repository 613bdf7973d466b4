/**
 * Issue 41, finding 2: the embedded store's files and the push credentials at rest. The real entry as a process
 * started with umask 000: every file in DATA_DIR is 0600 and every folder 0700 after a first start and after turns;
 * a push config's URL, token and credentials are found nowhere in the folder (every file, the WAL included, read
 * as bytes) after the config was created, and after it was deleted; the generated key sits beside the database's
 * folder, not in it, and opens the config after a restart. On PostgreSQL (SECRETS_KEY), a pg_dump of the gateway's
 * schema holds none of them either.
 */
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { lstatSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { rpc, SEED_HEADERS, userMessage } from '../fixtures/gateway-helpers.js'
import { startMain } from '../fixtures/gateway-process.js'
import { webhookReceiver } from '../fixtures/webhook-receiver.js'
import { testSchema } from '../fixtures/test-schema.js'
import { ServerCallContext } from '@a2a-js/sdk/server'
import { AuthenticatedCaller } from '../../packages/a2a-converse/src/auth/sdk-user.js'
import { CALLER_KEY_STATE } from '../../packages/a2a-converse/src/stores/caller-key.js'

t.setTimeout(300_000)

/** Three secrets a caller gives with a config: in its URL's query, its token, its credentials. */
function secrets () {
  const [query, token, credentials] = [0, 1, 2].map(() => randomBytes(16).toString('hex'))
  return { query, token, credentials }
}

/** Every entry under the folder (itself included), with its mode. */
function entries (folder: string): Array<{ path: string, mode: number, directory: boolean }> {
  const found = [{ path: folder, mode: lstatSync(folder).mode & 0o777, directory: true }]
  for (const entry of readdirSync(folder, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name)
    found.push({ path, mode: lstatSync(path).mode & 0o777, directory: entry.isDirectory() })
  }
  return found
}

/** The files under the folder holding any of the needles, read as bytes (every file: WAL segments, relations). */
function filesHolding (folder: string, needles: string[]): string[] {
  return entries(folder).filter((entry) => !entry.directory)
    .filter((entry) => { const bytes = readFileSync(entry.path); return needles.some((needle) => bytes.includes(needle)) })
    .map((entry) => entry.path)
}

async function call (base: string, method: string, params: Record<string, unknown>): Promise<Record<string, any>> {
  const response = await fetch(`${base}/a2a/demo`, { method: 'POST', headers: SEED_HEADERS, body: rpc(method, params) })
  return await response.json() as Record<string, any>
}

t.test('embedded, umask 000: DATA_DIR private; a config\'s secrets nowhere in its files, created or deleted', async (t) => {
  const receiver = await webhookReceiver(t)
  const dataDir = join(t.testdir(), 'data')
  const env = { STATE: 'embedded', DATA_DIR: dataDir, PUSH_ALLOWED_HOSTS: '127.0.0.1', PUSH_ALLOW_HTTP: 'true', LOG_LEVEL: 'info' }
  const umask = process.umask(0)
  let first
  try {
    first = startMain(t, env)
  } finally {
    process.umask(umask)
  }
  const base = await first.listening()
  const keyLine = first.lines().find((line) => typeof line.msg === 'string' && line.msg.includes('secrets.key'))
  t.equal(keyLine?.file, join(dataDir, 'secrets.key'), 'the log says where the generated key is')

  const secret = secrets()
  const needles = Object.values(secret)
  const task = (await call(base, 'SendMessage', { message: userMessage('I would like to book a table', { contextId: randomUUID() }) })).result.task
  const created = (await call(base, 'CreateTaskPushNotificationConfig', {
    taskId: task.id, url: `${receiver.url}?key=${secret.query}`, token: secret.token, authentication: { scheme: 'Bearer', credentials: secret.credentials }
  })).result
  t.equal(created.token, secret.token)
  // A turn: a notification recorded in the outbox (the config copied into it) and delivered.
  await call(base, 'SendMessage', { message: userMessage('partySize=4', { contextId: task.contextId, taskId: task.id }) })
  const [delivered] = await receiver.waitFor(1)
  t.equal(delivered.headers.authorization, `Bearer ${secret.credentials}`, 'delivered with the credentials as given')
  t.strictSame(filesHolding(dataDir, needles), [], 'created, running: in no file of DATA_DIR (WAL included)')
  first.kill('SIGTERM')
  t.same(await first.exited, { code: 0, signal: null })
  t.strictSame(filesHolding(dataDir, needles), [], 'created, stopped: in no file')

  const second = startMain(t, env)
  const again = await second.listening()
  const read = (await call(again, 'GetTaskPushNotificationConfig', { taskId: task.id, id: created.id })).result
  t.match(read, { token: secret.token, authentication: { credentials: secret.credentials } }, 'after a restart the generated key opens it')
  t.same((await call(again, 'DeleteTaskPushNotificationConfig', { taskId: task.id, id: created.id })).result, {})
  second.kill('SIGTERM')
  t.same(await second.exited, { code: 0, signal: null })
  t.strictSame(filesHolding(dataDir, needles), [], 'deleted: in no file')

  const all = entries(dataDir)
  t.ok(all.length > 900, `${all.length} files and folders`)
  t.strictSame(all.filter((entry) => entry.mode !== (entry.directory ? 0o700 : 0o600)).map((entry) => `${entry.path} ${entry.mode.toString(8)}`), [],
    'every folder 0700, every file 0600 (started with umask 000)')
  t.ok(all.some((entry) => entry.path === join(dataDir, 'pgdata', 'PG_VERSION')), 'the database in pgdata/')
  t.equal(lstatSync(join(dataDir, 'secrets.key')).mode & 0o777, 0o600, 'the key beside it, 0600')
})

const url = process.env.TEST_DATABASE_URL
t.test('PostgreSQL with SECRETS_KEY: a pg_dump of the schema holds no secret, created or deleted', { skip: url === undefined ? 'TEST_DATABASE_URL not set' : false }, async (t) => {
  const schema = testSchema(t, url as string)
  const child = startMain(t, { DATABASE_URL: url as string, DATABASE_SCHEMA: schema, SECRETS_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'info' })
  const base = await child.listening()
  t.notOk(child.lines().some((line) => line.variable === 'SECRETS_KEY'), 'no warning: a key is set')
  const dump = (): string => {
    const run = spawnSync('pg_dump', ['--data-only', '--schema', schema, url as string], { encoding: 'utf8' })
    t.equal(run.status, 0, run.stderr)
    return run.stdout
  }
  const secret = secrets()
  const task = (await call(base, 'SendMessage', { message: userMessage('I would like to book a table', { contextId: randomUUID() }) })).result.task
  const created = (await call(base, 'CreateTaskPushNotificationConfig', {
    taskId: task.id, url: `https://hooks.example.com/a2a?key=${secret.query}`, token: secret.token, authentication: { scheme: 'Bearer', credentials: secret.credentials }
  })).result
  const withConfig = dump()
  t.match(withConfig, /sb1\./, 'the config is in the dump, sealed')
  for (const [what, value] of Object.entries(secret)) t.notOk(withConfig.includes(value), `created: the ${what} is not in the dump`)
  t.match((await call(base, 'GetTaskPushNotificationConfig', { taskId: task.id, id: created.id })).result, { token: secret.token })
  await call(base, 'DeleteTaskPushNotificationConfig', { taskId: task.id, id: created.id })
  const after = dump()
  for (const [what, value] of Object.entries(secret)) t.notOk(after.includes(value), `deleted: the ${what} is not in the dump`)
  child.kill('SIGTERM')
  t.same(await child.exited, { code: 0, signal: null })
})

t.test('PostgreSQL without SECRETS_KEY: a warning, in clear; sealed rows then refuse the start', { skip: url === undefined ? 'TEST_DATABASE_URL not set' : false }, async (t) => {
  const { openGatewayState } = await import('../../src/gateway/state.js')
  const schema = testSchema(t, url as string)
  const lines: Array<{ obj: Record<string, unknown>, msg: string }> = []
  const logger = { info () {}, warn (obj: Record<string, unknown>, msg: string) { lines.push({ obj, msg }) } }
  const alice = new ServerCallContext({ user: new AuthenticatedCaller('alice'), state: new Map([[CALLER_KEY_STATE, 'caller:alice']]) })
  const config = { tenant: '', id: 'c1', taskId: 't1', url: 'https://hooks.example.com/a', token: 'tok-1', authentication: undefined }
  const open = async (key?: Buffer) => await openGatewayState({ state: 'postgres', dataDir: '', databaseUrl: url, databaseSchema: schema, secrets: { key, previous: [] } }, logger)

  const plain = await open()
  t.match(lines, [{ obj: { variable: 'SECRETS_KEY' }, msg: /^SECRETS_KEY is not set: push notification configs \(webhook URLs, tokens, credentials\) are stored in clear/ }])
  await plain.pushConfigsFor?.('demo').save('t1', alice, { ...config })
  await plain.close()
  const key = randomBytes(32)
  const sealed = await open(key)
  t.match(await sealed.pushConfigsFor?.('demo').load('t1', alice), [{ token: 'tok-1' }], 'the clear row read, and re-sealed at start')
  await sealed.close()
  await t.rejects(open(), { name: 'SecretsKeyMissingError', message: /^SECRETS_KEY is not set, but the database holds push configs sealed with a key/ })
})
