/**
 * A new data folder from a cluster template (issue 43): made once by a child process (PGlite's initdb, the library's
 * migrations, then its gzipped tar), named after the PGlite that made it and its migrations, unpacked at a first start
 * instead of running initdb, so that start's `migrate` has nothing to do (or only newer migrations); a template
 * another PGlite or another migration set made is passed over, and one naming a path outside its folder is refused.
 */
import t from 'tap'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { openEmbeddedDatabase } from '../../../packages/a2a-converse/src/stores/postgres/embedded-database.js'
import { makeClusterTemplate, pgliteVersion, templateFile, templateName, unpackTemplate } from '../../../packages/a2a-converse/src/stores/postgres/cluster-template.js'
import { CONVERSE_MIGRATION_TABLE, migrate, migrationNames } from '../../../packages/a2a-converse/src/stores/postgres/migrations.js'
import { TAKE_TASK_TURN_FUNCTION } from '../../../packages/a2a-converse/src/stores/postgres/take-task-turn-function.js'

const logger = { warn () {} }
// A template is an initdb in a child process: seconds, tens of them on a loaded 2-core machine.
t.setTimeout(300_000)

/** A ustar entry: a 512-byte header (name, optional prefix, size, type) and its body padded to 512 bytes. */
function entry (name: string, body: string, type: string, prefix = ''): Buffer {
  const header = Buffer.alloc(512)
  header.write(name, 0, 100)
  header.write(body === '' ? '' : body.length.toString(8).padStart(11, '0'), 124, 12)
  header.write(type, 156, 1)
  header.write('ustar', 257)
  header.write(prefix, 345, 155)
  const padded = Buffer.alloc(Math.ceil(body.length / 512) * 512)
  padded.write(body)
  return Buffer.concat([header, padded])
}

t.test('a first start unpacks the installed PGlite\'s template instead of running initdb', async (t) => {
  const templates = t.testdir()
  const file = await makeClusterTemplate(join(templates, 'made'))
  t.equal(file, await templateFile(join(templates, 'made')))
  t.match(file, new RegExp(`cluster-pglite-${(await pgliteVersion()).replaceAll('.', '\\.')}-[0-9a-f]{12}\\.tar\\.gz$`), 'named after the PGlite that made it')
  t.strictSame(readdirSync(join(templates, 'made')), [file.split('/').pop()], 'nothing half-written left beside it')
  // Every initdb draws a new system identifier: two folders sharing one came from the same template.
  const identifiers: string[] = []
  for (const name of ['a', 'b']) {
    const dataDir = join(templates, name)
    const database = await openEmbeddedDatabase({ dataDir, templates: join(templates, 'made'), logger })
    identifiers.push((await database.pool.query('select system_identifier::text as id from pg_control_system()')).rows[0].id)
    t.strictSame((await migrate(database.db, { schema: 'public' })).applied, [], 'migrated already: nothing to apply')
    await database.pool.query('create table kept (n int)')
    await database.close()
  }
  t.equal(identifiers[0], identifiers[1], 'both the template\'s cluster')
  const dataDir = join(templates, 'a')
  t.notOk(existsSync(`${dataDir}.initdb`) || existsSync(`${dataDir}.ready`), 'moved in whole')
  t.equal(statSync(join(dataDir, 'PG_VERSION')).mode & 0o777, 0o600, 'its files private')
})

t.test('named after its PGlite and its migrations: a new migration makes a new name', async (t) => {
  t.equal(await templateFile('x'), join('x', templateName(await pgliteVersion(), migrationNames())))
  t.not(templateName('0.5.17', ['tasks/0001_create_tasks']), templateName('0.5.17', ['tasks/0001_create_tasks', 'converse/0001_converse_tables']))
  t.not(templateName('0.5.17', ['tasks/0001_create_tasks']), templateName('0.5.18', ['tasks/0001_create_tasks']))
  t.equal(migrationNames()[0], 'tasks/0001_create_tasks', 'history/name, in order')
})

t.test('a template another PGlite or another migration set made is passed over: initdb runs', async (t) => {
  const version = await pgliteVersion()
  const templates = t.testdir({
    [templateName('0.0.1', migrationNames())]: 'not a tar: never read',
    [templateName(version, migrationNames().slice(0, -1))]: 'not a tar: never read',
    [`cluster-pglite-${version}.tar.gz`]: 'not a tar: never read'
  })
  const database = await openEmbeddedDatabase({ dataDir: join(templates, 'pgdata'), templates, logger })
  t.teardown(async () => await database.close())
  t.strictSame((await database.pool.query('select 1 as one')).rows, [{ one: 1 }], 'a cluster of its own')
})

t.test('a cluster from a template with fewer migrations than the library\'s ends fully migrated', async (t) => {
  const templates = t.testdir()
  await makeClusterTemplate(templates)
  const dataDir = join(templates, 'pgdata')
  // What an older template holds: the newest migration (0015, a turn's lease and its task's read in one
  // statement) neither applied nor in the ledger.
  const older = await openEmbeddedDatabase({ dataDir, templates, logger })
  const newest = migrationNames().at(-1) as string
  await older.pool.query(`drop function ${TAKE_TASK_TURN_FUNCTION}`)
  await older.pool.query(`delete from ${CONVERSE_MIGRATION_TABLE} where name = $1`, [newest.split('/')[1]])
  await older.close()
  const database = await openEmbeddedDatabase({ dataDir, templates, logger })
  t.teardown(async () => await database.close())
  t.strictSame((await migrate(database.db, { schema: 'public' })).applied, [newest], 'the newer migration runs at start')
  const { rows } = await database.pool.query<{ name: string }>('select proname as name from pg_proc where proname = $1', [TAKE_TASK_TURN_FUNCTION])
  t.equal(rows.length, 1, 'the newest one\'s function is there')
})

t.test('a template that cannot be made fails with the child\'s message and leaves nothing', async (t) => {
  const templates = t.testdir()
  await t.rejects(makeClusterTemplate(templates, ['-c', 'no_such_setting_at_all=1']), /./)
  t.strictSame(readdirSync(templates), [], 'no half-written template')
})

t.test('unpacking: files and folders (a ustar prefix, a name of the field\'s whole length), other kinds skipped', async (t) => {
  const dir = t.testdir({ in: {} })
  const long = 'n'.repeat(100)
  const archive = Buffer.concat([
    entry('/base', '', '5'), entry('PG_VERSION', '18\n', '0'), entry('one', 'x', '', 'base'), entry(long, '', ''),
    entry('link', '', '2'), Buffer.alloc(1024)
  ])
  writeFileSync(join(dir, 't.tar.gz'), gzipSync(archive))
  await unpackTemplate(join(dir, 't.tar.gz'), join(dir, 'in'))
  t.strictSame(readdirSync(join(dir, 'in')).sort(), ['PG_VERSION', 'base', long].sort(), 'the link skipped')
  t.equal(statSync(join(dir, 'in', 'base')).mode & 0o777, 0o700)
  t.equal(statSync(join(dir, 'in', 'base', 'one')).size, 1)
  t.equal(statSync(join(dir, 'in', long)).size, 0, 'an entry without a size is empty')
  // An archive ending without its blocks of zeros ends with its last entry.
  writeFileSync(join(dir, 'u.tar.gz'), gzipSync(entry('PG_VERSION', '18\n', '0')))
  await unpackTemplate(join(dir, 'u.tar.gz'), join(dir, 'in', 'base'))
  t.ok(existsSync(join(dir, 'in', 'base', 'PG_VERSION')))
  // Streamed: a file longer than the unzipped chunks (16 KiB) is written whole; an archive cut short in a header ends
  // with its last whole entry.
  const big = 'abcdefgh'.repeat(5000) + 'z'
  writeFileSync(join(dir, 'b.tar.gz'), gzipSync(Buffer.concat([entry('big', big, '0'), entry('after', 'y', '0'), Buffer.alloc(100)])))
  await unpackTemplate(join(dir, 'b.tar.gz'), join(dir, 'in', 'base'))
  t.equal(readFileSync(join(dir, 'in', 'base', 'big'), 'utf8'), big)
  t.equal(readFileSync(join(dir, 'in', 'base', 'after'), 'utf8'), 'y')
})

t.test('unpacking: a path outside the folder refuses the template', async (t) => {
  const dir = t.testdir()
  for (const [name, prefix] of [['../evil', ''], ['..', ''], ['evil', '../..']]) {
    writeFileSync(join(dir, 'bad.tar.gz'), gzipSync(Buffer.concat([entry(name, 'x', '0', prefix), Buffer.alloc(1024)])))
    await t.rejects(unpackTemplate(join(dir, 'bad.tar.gz'), join(dir, 'in')), /names a path outside its folder/, `${prefix}/${name}`)
  }
  t.notOk(existsSync(join(dir, 'evil')))
})
