/**
 * A full disk during a turn (issue 24), on the embedded store: DATA_DIR on a small tmpfs of its own, filled up to
 * ENOSPC by a file next to the database, then a turn that must write. The caller gets -32603 "the state store is
 * unreachable; try again later" (no stack), the log names DATA_DIR, and nothing of the turn is written: once the
 * filler is gone, the task and the conversation are as they were before the turn, and the same turn sent again runs.
 *
 * A real disk needs a file system of its own: `mount -t tmpfs` (root, and a kernel that allows it). Elsewhere this
 * is skipped, saying why; test/library/stores/embedded-database.test.ts checks the error mapping on every machine.
 */
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtempSync, openSync, rmSync, rmdirSync, writeSync, closeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { gateway } from '../fixtures/conversation-gateway.js'

type Json = any

/** A tmpfs of its own at a new folder, or why there cannot be one here. */
function mountTmpfs (): { dir: string } | { skip: string } {
  if (process.platform !== 'linux') return { skip: `a tmpfs needs Linux (this is ${process.platform})` }
  if (process.getuid?.() !== 0) return { skip: 'mounting a tmpfs needs root (mount -t tmpfs); run the tests as root to fill a real disk' }
  const dir = mkdtempSync(join(tmpdir(), 'full-disk-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=96m', 'tmpfs', dir], { stdio: 'pipe' })
  } catch (error) {
    rmdirSync(dir)
    return { skip: `mount -t tmpfs refused here (${String((error as { stderr?: Buffer }).stderr ?? error).trim()})` }
  }
  return { dir }
}

/** Writes to `path` until the file system is full (ENOSPC); returns how many bytes it took. */
function fill (path: string): number {
  const fd = openSync(path, 'w')
  let written = 0
  try {
    for (const size of [1 << 20, 1 << 12, 1 << 9]) {
      const chunk = Buffer.alloc(size, 1)
      try {
        for (;;) written += writeSync(fd, chunk)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error
      }
    }
  } finally {
    closeSync(fd)
  }
  return written
}

const mounted = mountTmpfs()
// The embedded gateway's first start runs an initdb (seconds; tens of them on a loaded 2-core machine).
t.setTimeout(180_000)

if ('skip' in mounted) {
  t.test('a full disk during a turn (embedded store)', { skip: mounted.skip }, async () => {})
} else {
  t.teardown(() => {
    execFileSync('umount', [mounted.dir])
    rmdirSync(mounted.dir)
  })

  t.test('a full disk during a turn (embedded store): -32603, DATA_DIR in the log, nothing half-written', async (t) => {
    const dataDir = join(mounted.dir, 'data')
    const lines: Json[] = []
    const loggerStream = new Writable({
      write (chunk, _encoding, done) {
        for (const line of String(chunk).split('\n')) if (line !== '') lines.push(JSON.parse(line))
        done()
      }
    })
    const app = await gateway(t, { env: { STATE: 'embedded', DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, loggerStream })
    const call = async (method: string, params: Json): Promise<Json> => (await app.inject({
      method: 'POST',
      url: '/a2a/demo',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
    })).json()
    const conversations = async (): Promise<Json> => (await app.inject({
      method: 'GET', url: '/api/v1/agents/demo/conversations', headers: { authorization: 'Bearer operator-key-0123456789' }
    })).json().conversations
    const contextId = randomUUID()
    const waiting = (await call('SendMessage', { message: { messageId: randomUUID(), contextId, role: 'ROLE_USER', parts: [{ text: 'I would like to book a table' }] } })).result.task
    t.equal(waiting.status.state, 'TASK_STATE_INPUT_REQUIRED')
    const before = { task: (await call('GetTask', { id: waiting.id })).result, conversations: await conversations() }

    // The answer carries text that does not compress (random), so its turn needs new pages: a write that finds no room.
    const answer = {
      messageId: randomUUID(),
      contextId,
      taskId: waiting.id,
      role: 'ROLE_USER',
      parts: [{ text: 'date=2026-12-24' }, { text: randomBytes(12_000).toString('base64') }]
    }
    const filler = join(mounted.dir, 'filler')
    t.ok(fill(filler) > 0, 'the disk is full')
    const refused = await call('SendMessage', { message: answer })
    t.strictSame(refused.error, { code: -32603, message: 'the state store is unreachable; try again later' }, 'the caller is told to try again, no stack')
    const logged = lines.filter((line) => JSON.stringify(line).includes(`DATA_DIR ${dataDir}`))
    t.ok(logged.length > 0, 'the log names DATA_DIR')
    t.match(JSON.stringify(logged), /No space left on device/, 'and why')

    rmSync(filler)
    t.strictSame({ task: (await call('GetTask', { id: waiting.id })).result, conversations: await conversations() }, before,
      'after recovery: the task and the conversation as they were before the turn')
    const again = await call('SendMessage', { message: answer })
    t.equal(again.result?.task?.id, waiting.id, 'the same turn, sent again once there is room, runs')
    t.not(again.result.task.status.message.messageId, before.task.status.message.messageId)
  })
}
