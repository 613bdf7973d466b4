/**
 * Child process of the gateway benchmark: starts one server of bench/gateway-servers.ts (argv[2] names it),
 * reports `{ type: 'listening', url, path }` to the parent over IPC, answers `{ type: 'usage', id }` with its
 * CPU time and the requests it served (the protocol of child-app.ts), and exits cleanly on `{ type: 'stop' }`
 * (or when the parent goes away), so `--cpu-prof` can write its profile.
 *
 * Standalone, for profiling by hand: `node --cpu-prof dist/bench/gateway-server.js gateway` prints the URL
 * and stops on SIGINT/SIGTERM.
 */
import { SERVER_KINDS, startServer, type ServerKind } from './gateway-servers.js'
import type { Usage } from './lib.js'

export type ToChild = { type: 'usage', id: number } | { type: 'stop' }
export type ToParent = { type: 'listening', url: string, path: string } | { type: 'usage', id: number, usage: Usage }

const kind = process.argv[2] as ServerKind
if (!SERVER_KINDS.includes(kind)) {
  console.error(`usage: gateway-server.js ${SERVER_KINDS.join('|')}`)
  process.exit(2)
}

const server = await startServer(kind)
let requests = 0
server.http.on('request', () => { requests++ })
let stopping = false
function stop (): void {
  if (stopping) return
  stopping = true
  server.close().then(() => process.exit(0), () => process.exit(1))
}

if (process.send !== undefined) {
  process.on('message', (message: ToChild) => {
    if (message.type === 'stop') return stop()
    const { user, system } = process.cpuUsage()
    process.send?.({ type: 'usage', id: message.id, usage: { cpuMicros: user + system, requests } } satisfies ToParent)
  })
  process.on('disconnect', stop)
  process.send({ type: 'listening', url: server.url, path: server.path } satisfies ToParent)
} else {
  console.log(`${kind} listening at ${server.url}${server.path}`)
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
