/**
 * DATA_DIR (src/gateway/data-dir.ts) and the embedded state's secrets: a folder or file group or others could reach
 * is made private with one warning line naming it and the chmod done; an earlier version's layout moves into
 * pgdata/; the secrets key is generated into a 0600 file beside it, or SECRETS_KEY seals; a rotation re-seals every
 * row at start, and a row sealed with a key not given refuses the start.
 */
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { sql } from 'kysely'
import { ServerCallContext } from '@a2a-js/sdk/server'
import { AuthenticatedCaller } from '../../packages/a2a-converse/src/auth/sdk-user.js'
import { CALLER_KEY_STATE } from '../../packages/a2a-converse/src/stores/caller-key.js'
import { embeddedSecretBox, prepareDataDir } from '../../src/gateway/data-dir.js'
import { openGatewayState } from '../../src/gateway/state.js'
import { lockFolder } from '../../packages/a2a-converse/src/stores/postgres/folder-lock.js'
import { openEmbeddedDatabase } from '../../packages/a2a-converse/src/stores/postgres/embedded-database.js'
import { CONVERSE_MIGRATION_TABLE, migrationNames } from '../../packages/a2a-converse/src/stores/postgres/migrations.js'
import { TAKE_TASK_TURN_FUNCTION } from '../../packages/a2a-converse/src/stores/postgres/take-task-turn-function.js'
import { privateFolder } from '../../packages/a2a-converse/src/stores/postgres/folder-permissions.js'
import { SecretBox } from '../../packages/a2a-converse/src/stores/secret-box.js'
import { recordNotifications } from '../fixtures/push-outbox-rows.js'

t.setTimeout(300_000)

function recorder () {
  const lines: Array<{ level: string, obj: Record<string, unknown>, msg: string }> = []
  return {
    lines,
    info (obj: Record<string, unknown>, msg: string) { lines.push({ level: 'info', obj, msg }) },
    warn (obj: Record<string, unknown>, msg: string) { lines.push({ level: 'warn', obj, msg }) }
  }
}

const mode = (path: string) => statSync(path).mode & 0o777

t.test('a folder 0777 and a file 0644 in it: made private, one warning naming them and the chmod', async (t) => {
  const dataDir = t.testdir({ notes: 'x', sub: { inner: 'y' } })
  chmodSync(dataDir, 0o777)
  chmodSync(join(dataDir, 'notes'), 0o644)
  const log = recorder()
  const prepared = await prepareDataDir(dataDir, log)
  t.equal(prepared.databaseFolder, join(dataDir, 'pgdata'))
  t.equal(mode(dataDir), 0o700)
  t.equal(mode(join(dataDir, 'notes')), 0o600)
  t.equal(mode(join(dataDir, 'gateway.lock')), 0o600, 'the lock file too')
  const [warning] = log.lines
  t.match(warning, { level: 'warn', obj: { dataDir, path: dataDir, mode: '0777' } })
  t.match(warning.msg, `DATA_DIR ${dataDir}: `)
  t.match(warning.msg, `(${dataDir} was 0777); made private (chmod -R go-rwx ${dataDir})`)
  t.ok((warning.obj.opened as number) >= 2)
  await prepared.release()
  const quiet = recorder()
  await (await prepareDataDir(dataDir, quiet)).release()
  t.strictSame(quiet.lines, [], 'private already: nothing said')
})

t.test('privateFolder: a folder gone is nothing to protect; symbolic links are left as they are; other errors thrown', async (t) => {
  const dir = t.testdir({ file: 'x', target: 'y', link: t.fixture('symlink', 'target') })
  chmodSync(join(dir, 'target'), 0o644)
  t.strictSame(await privateFolder(join(dir, 'gone')), [])
  await t.rejects(privateFolder(join(dir, 'file', 'x')), { code: 'ENOTDIR' })
  const opened = await privateFolder(dir)
  t.strictSame(opened.map((entry) => entry.path).filter((path) => !path.endsWith('file') && path !== dir), [join(dir, 'target')], 'the link\'s target once, by its own name')
})

t.test('a new DATA_DIR is created 0700 whatever the umask', async (t) => {
  const dataDir = join(t.testdir(), 'a', 'data')
  const umask = process.umask(0)
  try {
    await (await prepareDataDir(dataDir, recorder())).release()
  } finally {
    process.umask(umask)
  }
  t.equal(mode(dataDir), 0o700)
})

t.test('an earlier version\'s layout (the database\'s files in DATA_DIR itself) moves into pgdata/; a start cut short resumes', async (t) => {
  const dataDir = t.testdir({ PG_VERSION: '17', base: { 1: 'x' }, 'pgdata.moving': { global: 'y' }, 'secrets.key': 'k' })
  const log = recorder()
  await (await prepareDataDir(dataDir, log)).release()
  t.equal(readFileSync(join(dataDir, 'pgdata', 'PG_VERSION'), 'utf8'), '17')
  t.ok(existsSync(join(dataDir, 'pgdata', 'base', '1')) && existsSync(join(dataDir, 'pgdata', 'global')))
  t.notOk(existsSync(join(dataDir, 'PG_VERSION')) || existsSync(join(dataDir, 'pgdata.moving')))
  t.equal(readFileSync(join(dataDir, 'secrets.key'), 'utf8'), 'k', 'the key stays beside it')
  t.match(log.lines.at(-1), { level: 'info', msg: `DATA_DIR ${dataDir}: the embedded database's files moved into pgdata/ (the secrets key is kept beside it)` })

  const both = t.testdir({ PG_VERSION: '17', pgdata: { PG_VERSION: '17' } })
  await t.rejects(prepareDataDir(both, recorder()), { code: /^(ENOTEMPTY|EEXIST)$/ }, 'both layouts at once: refused')
  const unlock = await lockFolder(both)
  await unlock()
  t.pass('the lock was released')
})

t.test('the secrets key: generated once into a 0600 file, or SECRETS_KEY (the file then read only)', async (t) => {
  const dataDir = t.testdir()
  const log = recorder()
  const umask = process.umask(0)
  let generated
  try {
    generated = await embeddedSecretBox(dataDir, { previous: [] }, log)
  } finally {
    process.umask(umask)
  }
  const file = join(dataDir, 'secrets.key')
  t.equal(mode(file), 0o600)
  t.match(log.lines[0], { level: 'info', obj: { file } })
  t.match(log.lines[0].msg, `push credentials sealed with a key generated into ${file}`)
  const sealed = generated.seal('x')
  const again = await embeddedSecretBox(dataDir, { previous: [] }, log)
  t.equal(again.keyId, generated.keyId, 'the same key at the next start')
  t.match(log.lines[1].msg, `push credentials sealed with the generated key in ${file}`)
  const key = randomBytes(32)
  const given = await embeddedSecretBox(dataDir, { key, previous: [] }, log)
  t.equal(given.keyId, new SecretBox(key).keyId)
  t.equal(given.open(sealed), 'x', 'the generated key still opens what it sealed')
  t.match(log.lines[2].msg, `push credentials sealed with SECRETS_KEY; the generated key in ${file} is read until every row is re-sealed`)
  const fresh = t.testdir()
  t.equal((await embeddedSecretBox(fresh, { key, previous: [] }, log)).keyId, given.keyId)
  t.notOk(existsSync(join(fresh, 'secrets.key')), 'with SECRETS_KEY nothing is generated')

  const broken = t.testdir({ 'secrets.key': 'not a key' })
  const problem = `${join(broken, 'secrets.key')} must be 32 bytes, as 64 hex digits or 44 base64 characters (openssl rand -base64 32); restore the key file, or remove it if no push config was stored with it`
  await t.rejects(embeddedSecretBox(broken, { previous: [] }, log), { name: 'SecretsKeyError', message: problem })
  await t.rejects(openGatewayState({ state: 'embedded', dataDir: broken, databaseUrl: undefined }, log), { name: 'DataDirError', message: `DATA_DIR ${broken}: ${problem}` }, 'the start refused naming the file')
  const folder = t.testdir()
  mkdirSync(join(folder, 'secrets.key'))
  await t.rejects(embeddedSecretBox(folder, { previous: [] }, log), { code: 'EISDIR' })
})

function context (callerId: string): ServerCallContext {
  return new ServerCallContext({ user: new AuthenticatedCaller(callerId), state: new Map([[CALLER_KEY_STATE, `caller:${callerId}`]]) })
}

t.test('rotation on the embedded state: rows re-sealed at start; a key not given refuses the start', async (t) => {
  const dataDir = join(t.testdir(), 'data')
  const alice = context('alice')
  const config = { tenant: '', id: 'c1', taskId: 't1', url: 'https://hooks.example.com/a', token: 'tok-1', authentication: { scheme: 'Bearer', credentials: 'cred-1' } }
  const open = async (secrets: { key?: Buffer, previous: Buffer[] }, log = recorder()) => {
    const state = await openGatewayState({ state: 'embedded', dataDir, databaseUrl: undefined, secrets }, log)
    return { state, log }
  }
  const rows = async (): Promise<string[]> => {
    const database = await openEmbeddedDatabase({ dataDir: join(dataDir, 'pgdata'), logger: { warn () {} } })
    const { rows } = await sql<{ config: string }>`select config from converse_push_configs order by id`.execute(database.db)
    await database.close()
    return rows.map((row) => row.config)
  }
  const outboxTargets = async (): Promise<string[]> => {
    const database = await openEmbeddedDatabase({ dataDir: join(dataDir, 'pgdata'), logger: { warn () {} } })
    const { rows } = await sql<{ target: string }>`select target from converse_push_outbox`.execute(database.db)
    await database.close()
    return rows.map((row) => row.target)
  }

  let { state } = await open({ previous: [] })
  await state.pushConfigsFor?.('demo').save('t1', alice, { ...config })
  await state.close()
  const generated = await rows()
  t.match(generated[0], /^sb1\./)
  // A row written in clear, as before sealing existed.
  const database = await openEmbeddedDatabase({ dataDir: join(dataDir, 'pgdata'), logger: { warn () {} } })
  await sql`insert into converse_push_configs (tenant, owner, task_id, id, agent_id, caller_key, config, converse)
    values ('', 'demo:alice', 't1', 'c2', 'demo', 'caller:alice', ${JSON.stringify({ ...config, id: 'c2' })}, false)`.execute(database.db)
  // And a notification waiting in the outbox, its target in clear.
  await recordNotifications(database.db, { agentId: 'demo', tenant: '', owner: 'demo:alice', taskId: 't1', configs: [{ config: { ...config, id: 'c2' }, converse: false }], updates: [{ n: 1 }] })
  await database.close()

  const first = randomBytes(32)
  const second = randomBytes(32)
  let log
  ;({ state, log } = await open({ key: first, previous: [] }))
  t.match(log.lines.find((line) => line.obj.rows !== undefined), { obj: { rows: 3, keyId: new SecretBox(first).keyId } }, 'the generated key\'s row, the clear one and the outbox row re-sealed')
  t.match(await state.pushConfigsFor?.('demo').load('t1', alice), [{ token: 'tok-1' }, { id: 'c2', token: 'tok-1' }])
  await state.close()
  t.ok((await rows()).every((row) => row.startsWith(`sb1.${new SecretBox(first).keyId}.`)))
  t.match(await outboxTargets(), [new RegExp(`^sb1\\.${new SecretBox(first).keyId}\\.`)], 'the outbox row too')

  await t.rejects(open({ key: second, previous: [] }), {
    name: 'SecretsKeyMissingError',
    message: `push credentials cannot be re-sealed with SECRETS_KEY: a value is sealed with key id ${new SecretBox(first).keyId}, which is neither the current key nor a previous one given; give the key they were sealed with in SECRETS_KEY_PREVIOUS`
  })
  ;({ state, log } = await open({ key: second, previous: [first] }))
  t.match(log.lines.find((line) => line.obj.rows !== undefined), { obj: { rows: 3 } })
  t.match(await state.pushConfigsFor?.('demo').load('t1', alice), [{ authentication: { credentials: 'cred-1' } }, {}])
  await state.close()
  t.match(await outboxTargets(), [new RegExp(`^sb1\\.${new SecretBox(second).keyId}\\.`)])
  ;({ state, log } = await open({ key: second, previous: [] }))
  t.notOk(log.lines.some((line) => line.obj.rows !== undefined), 'nothing left to re-seal: the old key is no longer needed')
  await state.close()
})

t.test('an upgrade: a migration newer than the folder\'s database runs at start, one line each', async (t) => {
  const dataDir = join(t.testdir(), 'data')
  const first = await openGatewayState({ state: 'embedded', dataDir, databaseUrl: undefined }, recorder())
  await first.close()
  // What a folder an earlier version made holds: the newest migration (0015, a turn's lease and its task's read in one
  // statement) neither applied nor in the ledger.
  const older = await openEmbeddedDatabase({ dataDir: join(dataDir, 'pgdata'), logger: { warn () {} } })
  const newest = migrationNames().at(-1) as string
  await older.pool.query(`drop function ${TAKE_TASK_TURN_FUNCTION}`)
  await older.pool.query(`delete from ${CONVERSE_MIGRATION_TABLE} where name = $1`, [newest.split('/')[1]])
  await older.close()
  const log = recorder()
  const state = await openGatewayState({ state: 'embedded', dataDir, databaseUrl: undefined }, log)
  t.strictSame(log.lines.filter((line) => line.msg.startsWith('migration applied: ')).map((line) => [line.msg, line.obj]),
    [[`migration applied: ${newest}`, { dataDir, migration: newest }]], 'the newer one applied and logged, the others found done')
  await state.close()
  const upgraded = await openEmbeddedDatabase({ dataDir: join(dataDir, 'pgdata'), logger: { warn () {} } })
  const { rows } = await upgraded.pool.query<{ name: string }>('select proname as name from pg_proc where proname = $1', [TAKE_TASK_TURN_FUNCTION])
  await upgraded.close()
  t.equal(rows.length, 1, 'the newest one\'s function is there')
})
