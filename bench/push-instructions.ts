/**
 * push counted, not timed (issue 43): instructions per `book_table` turn of push.ts's memory gateway under callgrind
 * (callgrind.ts) — with an inline push config, without, and without but with the same three notifications POSTed by
 * undici alone after the reply (the in-process floor, push-floor.ts). One turn at a time, and each turn's POSTs
 * received before the next starts, so the window holds all of their work. The push path's own count (with − without)
 * against the floor's (floor − without): requests/s and CPU time on these shared machines swing too much between runs
 * of one tree (the push scenario's ratio by ±0.05) to tell a change of a tenth of the path.
 *
 * User space only, as instructions.ts: the POSTs' socket writes and reads in the kernel are not counted, nor the
 * collector (the heap each turn allocated is printed beside: what the collector would add is in proportion to it).
 *
 *   npm run bench:push-instructions
 *
 * Needs valgrind (callgrind_control); about 5 minutes per contender, two at a time.
 */
import { inPairs, startCounted } from './callgrind.js'
import { startChildApp } from './child-app.js'
import { benchNodes, formatTable } from './lib.js'
import { FLOOR_TARGET, IN_PROCESS_FLOOR_HEADER, turnNotifications, type CapturedNotification } from './push-floor.js'
import { HEADERS, bookingBody } from './push.js'

const WARMUP = 400
const SETTLE = 400
const MEASURED = Number(process.env.BENCH_MEASURED_REQUESTS ?? 1000)

const SCENARIO = new URL('./push.js', import.meta.url).href

type Kind = 'with' | 'without' | 'floor'

const CONTENDERS: ReadonlyArray<{ name: string, kind: Kind }> = [
  { name: 'book_table with an inline push config', kind: 'with' },
  { name: 'book_table without', kind: 'without' },
  { name: 'book_table without, its three notifications POSTed with undici alone after the reply (the in-process floor)', kind: 'floor' }
]

interface Count { instructions: number, allocated: number }

interface Stats { notifications: number, samples: Record<string, CapturedNotification> }

async function count (node: string, kind: Kind): Promise<Count> {
  const receiver = await startChildApp(SCENARIO, 'buildReceiver')
  const counted = await startCounted(SCENARIO, 'buildMemoryGateway', node).catch(async (error: unknown) => {
    await receiver.close()
    throw error
  })
  const { child, dump, part, close } = counted
  const stats = async (): Promise<Stats> => await (await fetch(`${receiver.url}/stats`)).json() as Stats
  const hook = `${receiver.url}/hook`
  let expected = 0
  /** One turn, and its notifications received. */
  const turn = async (withConfig: boolean): Promise<void> => {
    const headers = kind === 'floor' ? { ...HEADERS, [IN_PROCESS_FLOOR_HEADER]: '1' } : HEADERS
    const reply = await fetch(`${child.url}/a2a/demo`, { method: 'POST', headers, body: bookingBody(withConfig ? hook : undefined) })
    const text = await reply.text()
    if (!text.includes('TASK_STATE_COMPLETED')) throw new Error(`unexpected booking reply: ${text.slice(0, 300)}`)
    if (!withConfig && kind !== 'floor') return
    expected += 3
    while ((await stats()).notifications < expected) await new Promise((resolve) => setTimeout(resolve, 2))
  }
  const turns = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) await turn(kind === 'with')
  }
  try {
    // A turn with a config first, on every contender: the notifications the in-process floor posts.
    await turn(true)
    const notifications = turnNotifications((await stats()).samples)
    const floorSet = await fetch(`${child.url}/bench/push-floor`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: hook, notifications }) })
    if (!floorSet.ok) throw new Error(`the in-process floor was not set: ${floorSet.status}`)
    await turns(WARMUP)
    await child.usage(true)
    await dump()
    await turns(SETTLE)
    await dump()
    const before = await child.usage()
    await turns(MEASURED)
    const after = await child.usage()
    await dump()
    const allocated = (after.heapUsed as number) - (before.heapUsed as number)
    if (allocated < MEASURED * 1024) throw new Error(`${kind}: the heap was collected during the window (lower BENCH_MEASURED_REQUESTS)`)
    // The same with no turn (the idle event loop, the dump itself), taken off the window.
    await dump()
    const [window, idle] = await Promise.all([part(3), part(4)])
    return { instructions: (window - idle) / MEASURED, allocated: allocated / MEASURED }
  } finally {
    await close()
    await receiver.close()
  }
}

const nodes = await benchNodes()
const counts = await inPairs(nodes.flatMap((node) => CONTENDERS.map((contender) => async () => await count(node.execPath ?? process.execPath, contender.kind))))

nodes.forEach((node, n) => {
  const [withConfig, without, floor] = counts.slice(n * CONTENDERS.length, (n + 1) * CONTENDERS.length)
  console.log(`\npush, instructions per turn, Node ${node.version} (${MEASURED} turns counted, one at a time, each turn's POSTs received before the next)`)
  console.log(formatTable(['contender', 'instructions', 'heap allocated'], CONTENDERS.map((contender, index) => {
    const figure = [withConfig, without, floor][index]
    return [contender.name, `${(figure.instructions / 1000).toFixed(1)} k`, `${(figure.allocated / 1024).toFixed(1)} KiB`]
  })))
  const path = withConfig.instructions - without.instructions
  const posts = floor.instructions - without.instructions
  console.log(`  without / with = ${(without.instructions / withConfig.instructions).toFixed(3)} (as the requests/s ratio: higher is better; target ≥ 0.7 by requests/s)`)
  console.log(`  the push path's own: ${(path / 1000).toFixed(1)} k instructions and ${((withConfig.allocated - without.allocated) / 1024).toFixed(1)} KiB per turn; ` +
    `the in-process floor's: ${(posts / 1000).toFixed(1)} k and ${((floor.allocated - without.allocated) / 1024).toFixed(1)} KiB; path / floor = ${(path / posts).toFixed(2)} (target ≤ ${FLOOR_TARGET})`)
})
