/**
 * plugin-overhead counted, not timed: instructions per request of each contender's server, under valgrind's
 * callgrind. The count is the same whatever else the machine does, where requests/s and CPU time on these shared
 * machines swing by ±0.08 between two runs of the same code (docs/performance.md).
 *
 * Each server runs in its own child under callgrind (callgrind.ts: V8 on one thread, a young generation that holds
 * everything the run allocates, no memory reducer). One request at a time over a keep-alive connection: WARMUP
 * requests, one full collection (`--expose-gc`), SETTLE more requests (the JIT's late work), then MEASURED requests
 * between two dumps with no collection at all (checked), and an idle window (no request) taken off. The figure is the
 * code's own instructions per request, the same in every run; what the collector would add is in proportion to the
 * heap each request allocated, printed beside it (the heap's growth over the window). With collections in the
 * window, two runs of one server differed by 15 %, and a window held a whole mark-compact or none.
 *
 * User space only: the kernel's share of a request (the socket's writev and read, 35–45 % of its CPU time in
 * profiles) is not counted, which is why requests/s ratios sit closer to 1 than these.
 *
 *   npm run bench:instructions
 *   BENCH_NODES=/path/to/node22,/path/to/node24 npm run bench:instructions   (other Node binaries, side by side)
 *
 * Needs valgrind (callgrind_control); about 4 minutes per contender and Node, two at a time.
 */
import http from 'node:http'
import { CONVERSE_EXTENSION_URI } from 'a2a-converse'
import { inPairs, startCounted } from './callgrind.js'
import { SEED_REQUEST, benchNodes, formatTable } from './lib.js'

const WARMUP = 4000
const SETTLE = 6000
const MEASURED = Number(process.env.BENCH_MEASURED_REQUESTS ?? 10_000)

const SCENARIO = new URL('./plugin-overhead.js', import.meta.url).href
const PATH = '/a2a/ag_7Qb3nT1xK9wZs2Pv0Lm4Rd'
const HEADERS = { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': CONVERSE_EXTENSION_URI }

const CONTENDERS = [
  { name: 'without plugin', exportName: 'buildWithoutPlugin' },
  { name: 'control: without plugin, the decorated reply canned', exportName: 'buildControl' },
  { name: 'with plugin, frozen envelope (judged)', exportName: 'buildWithPlugin' },
  { name: 'with plugin, envelope built per call', exportName: 'buildWithPluginPerCall' }
] as const

interface Count { instructions: number, allocated: number, replyBytes: number }

/** Sends `count` requests one after the other over one keep-alive connection; the last reply's size. */
async function send (url: string, agent: http.Agent, count: number): Promise<number> {
  let bytes = 0
  for (let i = 0; i < count; i++) {
    bytes = await new Promise<number>((resolve, reject) => {
      const request = http.request(url + PATH, { method: 'POST', headers: HEADERS, agent }, (response) => {
        let size = 0
        response.on('data', (chunk: Buffer) => { size += chunk.length })
        response.on('end', () => response.statusCode === 200 ? resolve(size) : reject(new Error(`status ${String(response.statusCode)}`)))
      })
      request.on('error', reject)
      request.end(SEED_REQUEST)
    })
  }
  return bytes
}

async function count (node: string, exportName: string): Promise<Count> {
  const { child, dump, part, close } = await startCounted(SCENARIO, exportName, node)
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  try {
    await send(child.url, agent, WARMUP)
    // One full collection here, before the JIT's late work: the start-up's garbage and any collection V8 has begun
    // (Node 22 and 24 start a mark-compact near 40 MB) are done with; the window after SETTLE then sees none.
    await child.usage(true)
    await dump()
    await send(child.url, agent, SETTLE)
    await dump()
    const before = await child.usage()
    const replyBytes = await send(child.url, agent, MEASURED)
    const after = await child.usage()
    await dump()
    // A request allocates tens of kilobytes: a heap that grew by less than one per request was collected.
    const allocated = (after.heapUsed as number) - (before.heapUsed as number)
    if (allocated < MEASURED * 1024) {
      throw new Error(`${exportName}: the heap was collected during the window (raise SEMI_SPACE_MB or lower the request counts)`)
    }
    // The same with no request (the idle event loop, the dump itself), taken off the window.
    await dump()
    const [window, idle] = await Promise.all([part(3), part(4)])
    return { instructions: (window - idle) / MEASURED, allocated: allocated / MEASURED, replyBytes }
  } finally {
    agent.destroy()
    await close()
  }
}

const nodes = await benchNodes()
const counts = await inPairs(nodes.flatMap((node) => CONTENDERS.map((contender) => () => count(node.execPath ?? process.execPath, contender.exportName))))

nodes.forEach((node, n) => {
  const figures = counts.slice(n * CONTENDERS.length, (n + 1) * CONTENDERS.length)
  const [without, control, frozen, perCall] = figures
  console.log(`\nplugin-overhead, instructions per request, Node ${node.version} (${MEASURED} requests counted)`)
  console.log(formatTable(['contender', 'instructions', 'heap allocated', 'reply bytes'], CONTENDERS.map((contender, index) =>
    [contender.name, `${(figures[index].instructions / 1000).toFixed(1)} k`, `${(figures[index].allocated / 1024).toFixed(1)} KiB`,
      String(figures[index].replyBytes)])))
  // As the HTTP ratios: higher is better (fewer instructions than the reference).
  const ratio = (a: Count, b: Count) => (b.instructions / a.instructions).toFixed(3)
  console.log(`  with plugin / without = ${ratio(frozen, without)} (frozen envelope), ${ratio(perCall, without)} (built per call)`)
  console.log(`  control / without = ${ratio(control, without)} (the envelope's bytes, no plugin)`)
  console.log(`  with plugin / control = ${ratio(frozen, control)} (frozen), ${ratio(perCall, control)} (built per call): the plugin's own work`)
})
