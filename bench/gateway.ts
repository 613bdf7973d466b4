/**
 * The gateway against its references on the seed's SendMessage (A2A-Version 1.0, the converse extension
 * requested), from one run:
 *
 * - gateway: the real gateway app with the demo agent (knowledge search, conversation store, converse plugin);
 * - express: an @a2a-js/sdk Express server with an echo executor replying one Message of the same shape
 *   and about the same size (the same envelope in metadata);
 * - bare: a bare Fastify route returning a canned reply of the same size.
 *
 * Targets: gateway ≥ 3× express, gateway ≥ 0.6× bare.
 *
 * Fairness on a 2-core machine: each server runs in its own child process (bench/gateway-server.ts), so no
 * two servers share an event loop and the load generator (autocannon, in a worker thread of this process)
 * does not share one with any server; only the server under load is busy at a time. Few connections
 * (default 10) keep a single-threaded server saturated without making autocannon the bottleneck. Rounds rotate
 * the order (A,B,C / B,C,A / C,A,B …), every reply is checked before measuring, and each ratio is the median
 * of per-round ratios. Each child also reports its CPU time per request (user + system, so the socket writes
 * count): other load on the machine moves requests/s a lot and CPU per request much less, so the notes give
 * the ratios on that figure too. `BENCH_CPU_PROF=<dir>` starts the gateway child with `--cpu-prof` into that
 * folder (docs/performance.md).
 */
import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { CONVERSE_EXTENSION_URI } from 'a2a-converse'
import type { ToChild, ToParent } from './gateway-server.js'
import { SEED_HEADERS, type ServerKind } from './gateway-servers.js'
import { ANSWER_TEXT, SEED_REQUEST, compare, pairedRatio, runOptions, type Contender, type Row, type RunOptions, type ScenarioResult, type Usage } from './lib.js'

export const name = 'gateway'
/** gateway / express. */
export const EXPRESS_TARGET = 3
/** gateway / bare route. */
export const BARE_TARGET = 0.6
export const DEFAULT_CONNECTIONS = 10

export interface Child { kind: ServerKind, process: ChildProcess, url: string, path: string, usage (): Promise<Usage> }

/** Forks bench/gateway-server.js for `kind` and waits for its URL. */
export async function spawnServer (kind: ServerKind, execArgv: string[] = [], env: Record<string, string> = {}): Promise<Child> {
  const child = fork(new URL('./gateway-server.js', import.meta.url), [kind], {
    execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, ...env }
  })
  const pending = new Map<number, (usage: Usage) => void>()
  let nextId = 0
  const started = new Promise<{ url: string, path: string }>((resolve, reject) => {
    child.on('message', (message: ToParent) => {
      if (message.type === 'listening') resolve(message)
      else pending.get(message.id)?.(message.usage)
    })
    child.once('exit', (code) => reject(new Error(`${kind} server exited with code ${String(code)} before listening`)))
  })
  try {
    const { url, path } = await started
    const usage = () => new Promise<Usage>((resolve) => {
      const id = nextId++
      pending.set(id, (value) => {
        pending.delete(id)
        resolve(value)
      })
      child.send({ type: 'usage', id } satisfies ToChild)
    })
    return { kind, process: child, url, path, usage }
  } catch (error) {
    child.kill()
    throw error
  }
}

export async function stopServer (child: Child): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return
  const exited = once(child.process, 'exit')
  child.process.send({ type: 'stop' } satisfies ToChild)
  const timer = setTimeout(() => child.process.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(timer)
}

interface Reply {
  result?: { message?: { role?: string, parts?: Array<{ text?: string }>, extensions?: string[], metadata?: Record<string, { citations?: unknown[], answerCoverage?: { coverage?: string } }> } }
}

/** Sends the seed request once and checks the reply is the answer with its envelope; returns its byte size. */
export async function checkReply (contender: Contender): Promise<number> {
  const res = await fetch(contender.url + contender.load.path, { method: 'POST', headers: contender.load.headers, body: contender.load.body })
  const text = await res.text()
  const message = (JSON.parse(text) as Reply).result?.message
  const envelope = message?.metadata?.[CONVERSE_EXTENSION_URI]
  const ok = res.status === 200 &&
    res.headers.get('a2a-extensions') === CONVERSE_EXTENSION_URI &&
    message?.role === 'ROLE_AGENT' &&
    message.parts?.[0]?.text === ANSWER_TEXT &&
    message.extensions?.includes(CONVERSE_EXTENSION_URI) === true &&
    envelope?.answerCoverage?.coverage === 'answered' &&
    envelope.citations?.length === 1
  if (!ok) throw new Error(`${contender.name}: unexpected reply (status ${res.status}): ${text.slice(0, 500)}`)
  return Buffer.byteLength(text)
}

export async function run (overrides: Partial<RunOptions> = {}): Promise<ScenarioResult> {
  const options = runOptions({ connections: DEFAULT_CONNECTIONS, ...overrides })
  const profileDir = process.env.BENCH_CPU_PROF
  const children: Child[] = []
  try {
    children.push(await spawnServer('gateway', profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]))
    children.push(await spawnServer('express'))
    children.push(await spawnServer('bare'))
    const names: Record<ServerKind, string> = {
      gateway: 'gateway SendMessage (demo agent, extension active)',
      express: '@a2a-js/sdk Express server, echo executor',
      bare: 'bare Fastify route, canned reply',
      'express-door': 'Express door (converseRouter), echo executor',
      upstream: 'upstream agent (SDK Express server), echo executor',
      proxy: 'gateway in proxy mode',
      'gateway-keys': 'gateway, API key required + rate limit',
      'gateway-mcp-per-request': 'gateway, MCP door without its fast path',
      'proxy-caller': 'gateway in proxy mode, a caller, identity: none',
      'proxy-assertion': 'gateway in proxy mode, a caller, identity: assertion'
    }
    const contenders: Contender[] = children.map((child) => ({
      name: names[child.kind],
      url: child.url,
      load: { method: 'POST', path: child.path, headers: { ...SEED_HEADERS }, body: SEED_REQUEST },
      usage: child.usage
    }))
    const sizes: number[] = []
    for (const contender of contenders) sizes.push(await checkReply(contender))
    const rows = await compare(contenders, options)
    const cpu = (row: Row) => `${(row.cpuMicrosPerRequest as number).toFixed(1)} µs`
    return {
      name,
      rows,
      ratios: [
        { description: 'gateway / Express server', ratio: pairedRatio(rows, 0, 1), target: EXPRESS_TARGET },
        { description: 'gateway / bare route', ratio: pairedRatio(rows, 0, 2), target: BARE_TARGET }
      ],
      notes: [
        `reply bytes: ${children.map((child, index) => `${child.kind} ${sizes[index]}`).join(', ')}`,
        `server CPU per request (median): ${rows.map((row, index) => `${children[index].kind} ${cpu(row)}`).join(', ')}`,
        `CPU-based ratios (less sensitive to other load on the machine): gateway / Express = ${pairedRatio(rows, 0, 1, true).toFixed(3)}, ` +
          `gateway / bare = ${pairedRatio(rows, 0, 2, true).toFixed(3)}`,
        `each server in its own process; ${options.connections} connections, ${options.rounds} rounds of ${options.durationSec} s`
      ]
    }
  } finally {
    await Promise.all(children.map(stopServer))
  }
}
