/**
 * A benchmark app in its own process: no two servers share an event loop, and the load generator (autocannon,
 * in a worker thread of the parent) shares none with a server. The child also reports its CPU time and the
 * requests it served, so a scenario can give CPU µs per request, a figure that other load on the machine
 * disturbs far less than requests/s.
 *
 * Parent: `startChildApp(moduleUrl, exportName, spawn?)`; the export is an async function returning a Fastify
 * app that is not listening yet; `spawn` adds Node options and environment variables to the child. Child: this same
 * file, run with `--serve <moduleUrl> <exportName>`.
 */
import { fork } from 'node:child_process'
import { once } from 'node:events'
import type { FastifyInstance } from 'fastify'
import type { AddressInfo } from 'node:net'
import type { Usage } from './lib.js'

export interface ChildApp {
  url: string
  /** The process forked (valgrind's, when `spawn.execPath` runs the child under it). */
  pid: number
  /** CPU time and requests served; with `collect`, after a full garbage collection (a child run with --expose-gc). */
  usage (collect?: boolean): Promise<Usage>
  close (): Promise<void>
}

type ToParent = { type: 'listening', url: string } | { type: 'usage', id: number, usage: Usage }
/** `collect`: a full garbage collection first (a child run with --expose-gc). */
type ToChild = { type: 'usage', id: number, collect?: boolean }

export interface SpawnOptions {
  /**
   * The program that runs the child: another Node binary (default: this one), or a tool such as valgrind, whose
   * own arguments and the Node binary then go first in `execArgv`.
   */
  execPath?: string
  /** Node options of the child (e.g. `--import` of a module that must load first). */
  execArgv?: string[]
  /** Variables added to the parent's environment. */
  env?: Record<string, string>
}

export async function startChildApp (moduleUrl: string, exportName: string, spawn: SpawnOptions = {}): Promise<ChildApp> {
  const child = fork(new URL(import.meta.url), ['--serve', moduleUrl, exportName], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    ...(spawn.execPath === undefined ? {} : { execPath: spawn.execPath }),
    execArgv: spawn.execArgv ?? [],
    env: { ...process.env, ...spawn.env }
  })
  const exited = once(child, 'exit').then(([code]) => { throw new Error(`${exportName} server exited with code ${String(code)}`) })
  exited.catch(() => {})
  const pending = new Map<number, (usage: Usage) => void>()
  let nextId = 0
  const url = await Promise.race([exited, new Promise<string>((resolve) => {
    child.on('message', (message: ToParent) => {
      if (message.type === 'listening') resolve(message.url)
      else pending.get(message.id)?.(message.usage)
    })
  })])
  return {
    url,
    pid: child.pid as number,
    usage (collect = false) {
      const id = nextId++
      return new Promise<Usage>((resolve) => {
        pending.set(id, (usage) => { pending.delete(id); resolve(usage) })
        child.send({ type: 'usage', id, collect } satisfies ToChild)
      })
    },
    async close () {
      if (child.exitCode !== null) return
      child.kill('SIGTERM')
      await once(child, 'exit')
    }
  }
}

async function serve (moduleUrl: string, exportName: string): Promise<void> {
  const module = await import(moduleUrl) as Record<string, () => Promise<FastifyInstance>>
  const app = await module[exportName]()
  let requests = 0
  app.server.on('request', () => { requests++ })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  process.on('message', (message: ToChild) => {
    if (message.collect === true) (globalThis as { gc?: () => void }).gc?.()
    const { user, system } = process.cpuUsage()
    process.send?.({ type: 'usage', id: message.id, usage: { cpuMicros: user + system, requests, heapUsed: process.memoryUsage().heapUsed } } satisfies ToParent)
  })
  process.on('SIGTERM', () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
  // The parent is gone (crashed or killed): do not linger.
  process.on('disconnect', () => process.exit(0))
  process.send?.({ type: 'listening', url: `http://127.0.0.1:${port}` } satisfies ToParent)
}

// Not a top-level await: the module imported here imports this one, and would wait for it forever.
if (process.argv[2] === '--serve') {
  serve(process.argv[3], process.argv[4]).catch((error: unknown) => {
    console.error(error)
    process.exit(1)
  })
}
