/**
 * Timeouts and the connection cap (issue 10, defect 8): a request whose body never finishes is answered 408 and
 * its connection closed after REQUEST_TIMEOUT_MS instead of being held forever; beyond MAX_CONNECTIONS a new
 * connection is closed at once; the keep-alive timeout is what KEEP_ALIVE_TIMEOUT_MS says.
 */
import t from 'tap'
import { connect, type Socket } from 'node:net'
import { once } from 'node:events'
import { startGateway } from '../fixtures/gateway-helpers.js'

/** Everything the server sends on the socket until it closes it. */
function readUntilClosed (socket: Socket): Promise<string> {
  let text = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => { text += chunk })
  return new Promise((resolve) => socket.on('close', () => resolve(text)))
}

async function open (port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  return socket
}

t.test('a body that never finishes gets 408 and the connection closes', async (t) => {
  const { port } = await startGateway(t, { REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '1000' })
  const socket = await open(port)
  t.teardown(() => socket.destroy())
  const closed = readUntilClosed(socket)
  socket.write('POST /a2a/demo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: 1000\r\n\r\n{"jsonrpc":')
  const text = await closed
  t.match(text, /^HTTP\/1\.1 408 /, 'answered 408 Request Timeout, then closed')
})

t.test('headers that never finish: the connection closes', async (t) => {
  const { port } = await startGateway(t, { REQUEST_TIMEOUT_MS: '2000', HEADERS_TIMEOUT_MS: '1000' })
  const socket = await open(port)
  t.teardown(() => socket.destroy())
  const closed = readUntilClosed(socket)
  socket.write('POST /a2a/demo HTTP/1.1\r\nHost: x\r\n')
  t.match(await closed, /^HTTP\/1\.1 408 /, 'answered 408, then closed')
})

t.test('beyond MAX_CONNECTIONS a new connection is closed at once; the others are served', async (t) => {
  const { app, base, port } = await startGateway(t, { MAX_CONNECTIONS: '2', KEEP_ALIVE_TIMEOUT_MS: '65000' })
  t.equal(app.server.maxConnections, 2)
  t.equal(app.server.keepAliveTimeout, 65000, 'KEEP_ALIVE_TIMEOUT_MS')
  t.equal(app.server.requestTimeout, 30000, 'REQUEST_TIMEOUT_MS default')
  t.equal(app.server.headersTimeout, 10000, 'HEADERS_TIMEOUT_MS default')
  const held = [await open(port), await open(port)]
  t.teardown(() => { for (const socket of held) socket.destroy() })
  const third = await open(port)
  t.equal(await readUntilClosed(third), '', 'the third connection is closed without an answer')
  for (const socket of held) socket.destroy()
  await Promise.all(held.map((socket) => once(socket, 'close')))
  const health = await fetch(`${base}/health/live`)
  t.equal(health.status, 200, 'served again once connections were freed')
})
