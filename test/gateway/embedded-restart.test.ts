/**
 * The default state, the embedded database in DATA_DIR, across a restart of the real entry (src/gateway/main.ts as a
 * process): a routine left waiting for input and a conversation taken over by a person survive SIGTERM and SIGKILL —
 * GetTask shows the task as its client was told, the routine continues with the next answer, the inbox still shows
 * the conversation as human-owned. And the folder's faults, each named with DATA_DIR.
 */
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { rpc, SEED_HEADERS, userMessage } from '../fixtures/gateway-helpers.js'
import { startMain, type Exit, type GatewayProcess } from '../fixtures/gateway-process.js'

// Each test starts the gateway through tap's TypeScript loader, and the first start of a folder runs initdb: the file
// took 230 s of a 300 s budget on a loaded 2-core machine (two suites at once), so it has twice that.
t.setTimeout(600_000)

const KEY = 'operator-key-for-restart-tests'

async function started (t: Test, dataDir: string): Promise<{ child: GatewayProcess, base: string }> {
  const child = startMain(t, { STATE: 'embedded', DATA_DIR: dataDir, OPERATOR_API_KEY: KEY, LOG_LEVEL: 'info' })
  return { child, base: await child.listening() }
}

/**
 * A start that must be refused: the child's exit, or — should it start serving instead — a failure at once (not a
 * tap timeout while a gateway that should have refused serves on).
 */
async function refused (child: GatewayProcess): Promise<Exit> {
  const served = child.listening().then((address) => { throw new Error(`started instead of refusing (listening at ${address})`) }, () => undefined)
  const exit = await Promise.race([child.exited, served])
  return exit ?? await child.exited
}

async function call (base: string, method: string, params: Record<string, unknown>): Promise<Record<string, any>> {
  const response = await fetch(`${base}/a2a/demo`, { method: 'POST', headers: SEED_HEADERS, body: rpc(method, params) })
  return await response.json() as Record<string, any>
}

async function operator (base: string, path: string, method = 'GET'): Promise<Record<string, any>> {
  const response = await fetch(`${base}/api/v1/agents/demo/conversations${path}`, { method, headers: { authorization: `Bearer ${KEY}` } })
  return { status: response.status, body: await response.json() }
}

for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
  t.test(`${signal}, then npm start again: every task, routine and takeover is where the clients left it`, async (t) => {
    const dataDir = join(t.testdir(), 'data')
    const first = await started(t, dataDir)
    t.match(first.child.lines().find((line) => line.msg === 'gateway configured'), { stateStore: 'embedded', dataDir }, 'the log names the store and its folder')
    t.same(await (await fetch(`${first.base}/health/ready`)).json(), { status: 'ready', checks: { database: 'ok' } }, 'ready: the database answers')

    const routineContext = randomUUID()
    const waiting = (await call(first.base, 'SendMessage', { message: userMessage('I would like to book a table', { contextId: routineContext }) })).result.task
    t.equal(waiting.status.state, 'TASK_STATE_INPUT_REQUIRED', 'a routine waits for input')
    const heldContext = randomUUID()
    await call(first.base, 'SendMessage', { message: userMessage('Hello there', { contextId: heldContext }) })
    t.equal((await operator(first.base, `/${heldContext}/takeover`, 'POST')).status, 200, 'a person takes a conversation over')

    first.child.kill(signal)
    const exit = await first.child.exited
    t.same(exit, signal === 'SIGTERM' ? { code: 0, signal: null } : { code: null, signal: 'SIGKILL' })

    const second = await started(t, dataDir)
    const task = (await call(second.base, 'GetTask', { id: waiting.id })).result
    t.equal(task.status.state, 'TASK_STATE_INPUT_REQUIRED', 'GetTask: as its client was told')
    t.same(task.status.message.parts, waiting.status.message.parts, 'with the same question')
    const answered = (await call(second.base, 'SendMessage', {
      message: userMessage('date=2031-02-03, partySize=4', { contextId: routineContext, taskId: waiting.id })
    })).result.task
    t.equal(answered.id, waiting.id, 'the routine continues in its task')
    t.not(answered.status.state, 'TASK_STATE_FAILED')
    t.equal((await operator(second.base, `/${heldContext}`)).body.ownership, 'human_owned', 'the inbox still shows the takeover')
    const held = (await call(second.base, 'SendMessage', { message: userMessage('Is a person there?', { contextId: heldContext }) })).result.task
    t.equal(held.status.state, 'TASK_STATE_WORKING', 'the next turn waits for the person, not the agent')
    second.child.kill('SIGTERM')
    t.same(await second.child.exited, { code: 0, signal: null })
  })
}

t.test('the folder\'s faults: each refuses the start with DATA_DIR named, exit 1, no stack', async (t) => {
  const dir = t.testdir({ 'a-file': 'not a folder', 'not-a-database': { PG_VERSION: '99' } })

  const unwritable = startMain(t, { STATE: 'embedded', DATA_DIR: join(dir, 'a-file', 'data') })
  t.equal((await refused(unwritable)).code, 1)
  t.match(unwritable.stderr(), /^a2a-converse: cannot start: DATA_DIR .*a-file\/data: cannot be created or written \(ENOTDIR\)\n$/)

  const garbage = startMain(t, { STATE: 'embedded', DATA_DIR: join(dir, 'not-a-database') })
  t.equal((await refused(garbage)).code, 1)
  t.match(garbage.stderr(), /^a2a-converse: cannot start: DATA_DIR .*not-a-database: the embedded database cannot be opened \(PGlite failed to initialize properly\)\n$/)

  const dataDir = join(dir, 'data')
  const holder = await started(t, dataDir)
  const second = startMain(t, { STATE: 'embedded', DATA_DIR: dataDir })
  t.equal((await refused(second)).code, 1, 'a second gateway on the same folder')
  t.match(second.stderr(), new RegExp(`^a2a-converse: cannot start: DATA_DIR ${dataDir}: is in use by another running process \\(pid ${holder.child.pid}\\); stop it or choose another DATA_DIR\\n$`))
  t.equal((await call(holder.base, 'GetTask', { id: randomUUID() })).error.code, -32001, 'the first one serves on, untouched')
  holder.child.kill('SIGKILL')
  await holder.child.exited

  // What a newer version would leave: a migration this one does not know, in the ledger.
  const { openEmbeddedDatabase } = await import('../../packages/a2a-converse/src/stores/postgres/embedded-database.js')
  const database = await openEmbeddedDatabase({ dataDir: join(dataDir, 'pgdata'), logger: { warn () {} } })
  await database.pool.query("insert into converse_migrations (name, timestamp) values ('9999_from_the_future', now())")
  await database.close()
  const newer = startMain(t, { STATE: 'embedded', DATA_DIR: dataDir })
  t.equal((await refused(newer)).code, 1)
  t.match(newer.stderr(), /DATA_DIR .*: was written by a newer version of a2a-converse .*; run that version, or start with another DATA_DIR\n$/)
})
