/**
 * Worker thread of bench/big-bodies.ts: on 'start', keeps `inFlight` SendMessages of `bodyBytes` in flight (a
 * question, then filler; a fresh messageId each) until 'stop', then posts how many completed, over how long, and
 * the first failure, if any.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { randomUUID } from 'node:crypto'
import { Agent, request } from 'undici'

const { url, inFlight, bodyBytes, headers } = workerData as { url: string, inFlight: number, bodyBytes: number, headers: Record<string, string> }
const dispatcher = new Agent({ localAddress: '127.0.0.1', connections: inFlight })
const head = '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"'
const middle = '","role":"ROLE_USER","parts":[{"text":"When are you open on Saturday? '
const tail = '"}]}}}'
const filler = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(bodyBytes / 27))
  .slice(0, bodyBytes - head.length - randomUUID().length - middle.length - tail.length)

let running = false // changed by the parent's messages, between awaits
let done = 0
let failed: string | undefined

async function sender (): Promise<void> {
  // eslint-disable-next-line no-unmodified-loop-condition -- set by the parent's "stop" message, between awaits
  while (running) {
    const response = await request(url, { method: 'POST', headers, body: `${head}${randomUUID()}${middle}${filler}${tail}`, dispatcher })
    const text = await response.body.text()
    if (response.statusCode !== 200 || !text.includes('"result"')) failed ??= `${response.statusCode} ${text.slice(0, 200)}`
    done++
  }
}

parentPort?.on('message', (message: string) => {
  if (message === 'start') {
    running = true
    done = 0
    const started = performance.now()
    const senders = Array.from({ length: inFlight }, sender)
    parentPort?.once('message', () => {
      running = false
      Promise.all(senders).then(() => {
        parentPort?.postMessage({ done, seconds: (performance.now() - started) / 1000, failed })
      }, (error: Error) => parentPort?.postMessage({ done, seconds: 1, failed: error.message }))
    })
  }
})
