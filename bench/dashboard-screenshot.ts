/**
 * docs/dashboard-prometheus.png (`npm run docs:dashboard`): the Grafana dashboard's key queries
 * (deploy/grafana/dashboards/a2a-converse.json) on Prometheus's own graph page, against a real gateway.
 *
 * Grafana is not available where this was made, so the picture is Prometheus's classic graph page (the one Debian's
 * `prometheus` package serves) with one graph per dashboard query, each read out of the dashboard JSON:
 *
 * 1. the real gateway app (buildGateway, the demo agent, memory state, METRICS_TOKEN set, the A2A door's rate limit
 *    low and TRUST_PROXY on loopback so that each simulated caller has an address of its own) on a loopback port;
 * 2. a real Prometheus (`prometheus` on PATH, or PROMETHEUS_PATH) with deploy/prometheus.yml's scrape job as it is
 *    (job name, metrics_path, bearer token from a file) but for the target (the loopback gateway instead of DNS
 *    discovery) and a 1 s scrape interval, storage in a temp dir, on a free loopback port;
 * 3. a scripted mix of turns over real HTTP for DASHBOARD_SECONDS (default 100): questions the demo's documents
 *    answer, partly answer and cannot answer (docs/knowledge-gaps.md), an out-of-scope question, a greeting, a
 *    routine with slots, a typed routine call, a streamed question, GetTask, MCP tool calls (`ask_agent`,
 *    `book_table`) and a noisy caller whom the rate limit refuses after 60 questions in a minute;
 * 4. headless Chromium (Debian's, CHROMIUM_PATH) on /classic/graph with `g0.expr … gN.expr`, a full-page PNG.
 *
 * Grafana's template variables are replaced by what Grafana puts there for this dashboard: `$agent` (All) by its
 * `allValue` `.*`, `$__rate_interval` by `1m` (Grafana's value at short ranges for a data source with the default
 * 15 s scrape interval, as deploy/grafana/provisioning's is). Everything started is stopped at the end, also on an
 * error or Ctrl-C: the browser, Prometheus, the gateway, the temp dir.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { parse, stringify } from 'yaml'
import { buildGateway } from '../src/gateway/app.js'
import { loadConfig } from '../src/gateway/config.js'
import { CONVERSE_EXTENSION_URI } from 'a2a-converse'
import { freePort } from './lib.js'

const OUTPUT = resolve(process.env.DASHBOARD_SCREENSHOT ?? 'docs/dashboard-prometheus.png')
const SECONDS = Number(process.env.DASHBOARD_SECONDS ?? 100)
const PROMETHEUS = process.env.PROMETHEUS_PATH ?? 'prometheus'
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'
]
/** The A2A door's limit per caller and minute: the ordinary callers stay well under it, the noisy one does not. */
const RATE_LIMIT_MAX = 60

/** The dashboard panels shown, by title, and which of each panel's queries (refId). */
const PANELS: ReadonlyArray<{ title: string, refId: string }> = [
  { title: 'Answers by coverage', refId: 'A' },
  { title: 'Where the knowledge falls short: unanswered and partial answers by reason', refId: 'A' },
  { title: 'Requests by agent, binding and method', refId: 'A' },
  { title: 'Latency p50 / p95 by agent and method', refId: 'B' },
  { title: 'MCP tool calls by tool', refId: 'A' },
  { title: 'Rate-limit refusals by door', refId: 'A' }
]

/** Grafana's values for the dashboard's template variables (see above). */
const GRAFANA_VARIABLES: Readonly<Record<string, string>> = { agent: '.*', __rate_interval: '1m' }

type Json = Record<string, any>

// What the demo's documents answer, partly answer and cannot answer (README's walkthrough, docs/knowledge-gaps.md).
const ANSWERED = [
  'How long do I have to return an order?', 'When are you open on Saturday?', 'How long does standard delivery take?',
  'How long is the warranty?', 'Do you ship to Switzerland?', 'How much does express delivery cost?'
]
const PARTIAL = ['Do you sell gift cards?']
const UNANSWERED = ['What is the capital of France?', 'Can I pay with PayPal?', 'Do you have a loyalty programme?']
const OUT_OF_SCOPE = ['Should I sue the courier?']
const UNCLEAR = ['hello']

/** A caller: its address (X-Forwarded-For, the gateway trusts loopback) and its conversation. */
interface Caller { address: string, contextId: string }

/** Turns by kind, and what came back (coverage or HTTP status), for the summary printed at the end. */
const tally = new Map<string, Map<string, number>>()
function count (kind: string, outcome: string): void {
  const outcomes = tally.get(kind) ?? new Map<string, number>()
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
  tally.set(kind, outcomes)
}

function pick<T> (list: readonly T[]): T {
  return list[Math.floor(Math.random() * list.length)]
}

/** The coverage verdict in a reply (an A2A result or an MCP tool result), or what it was instead. */
function outcomeOf (status: number, text: string): string {
  if (status !== 200) return `HTTP ${status}`
  if (/"error":\{/.test(text)) return 'error'
  return /"coverage":"(\w+)"/.exec(text)?.[1] ?? /"status":"(\w+)"/.exec(text)?.[1] ?? 'no verdict'
}

/** Stops a child process: SIGTERM, SIGKILL after 10 s. */
async function stop (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(timer)
}

/** deploy/prometheus.yml's job scraping `target` every second, the token read from `tokenFile`. */
async function prometheusConfig (target: string, tokenFile: string): Promise<string> {
  const deployed = parse(await readFile('deploy/prometheus.yml', 'utf8'))
  const job = deployed.scrape_configs.find((config: Json) => config.job_name === 'a2a-converse')
  if (job === undefined) throw new Error('deploy/prometheus.yml has no a2a-converse job')
  const { dns_sd_configs: discovered, ...rest } = job
  if (discovered === undefined) throw new Error('deploy/prometheus.yml no longer discovers the gateways by DNS: update this script')
  const scraped = {
    ...rest,
    scrape_interval: '1s',
    authorization: { ...job.authorization, credentials_file: tokenFile },
    static_configs: [{ targets: [target] }]
  }
  return stringify({ global: { ...deployed.global, scrape_interval: '1s', evaluation_interval: '1s' }, scrape_configs: [scraped] })
}

/** The dashboard's queries for PANELS, Grafana's variables replaced. */
async function dashboardQueries (): Promise<Array<{ title: string, expr: string }>> {
  const dashboard = JSON.parse(await readFile('deploy/grafana/dashboards/a2a-converse.json', 'utf8'))
  const panels: Json[] = dashboard.panels.flatMap((panel: Json) => [panel, ...(panel.panels ?? [])])
  return PANELS.map(({ title, refId }) => {
    const target = panels.find((panel) => panel.title === title)?.targets?.find((query: Json) => query.refId === refId)
    if (target === undefined) throw new Error(`the dashboard has no panel "${title}" with query ${refId}`)
    const expr = (target.expr as string).replace(/\$(\w+)/g, (variable: string, name: string) => {
      const value = GRAFANA_VARIABLES[name]
      if (value === undefined) throw new Error(`"${title}": unknown Grafana variable ${variable}`)
      return value
    })
    return { title, expr }
  })
}

/** The gateway under load: A2A JSON-RPC, streams and MCP tool calls from simulated callers. */
function traffic (base: string) {
  const a2aHeaders = (caller: Caller): Record<string, string> => ({
    'content-type': 'application/json',
    'a2a-version': '1.0',
    'a2a-extensions': CONVERSE_EXTENSION_URI,
    'x-forwarded-for': caller.address
  })
  let id = 0

  async function a2a (kind: string, caller: Caller, method: string, params: Json): Promise<string> {
    const response = await fetch(`${base}/a2a/demo`, {
      method: 'POST',
      headers: a2aHeaders(caller),
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params })
    })
    const text = await response.text()
    count(kind, outcomeOf(response.status, text))
    return text
  }

  function message (caller: Caller, text: string, extra: Json = {}): Json {
    return { messageId: randomUUID(), role: 'ROLE_USER', contextId: caller.contextId, parts: [{ text }], ...extra }
  }

  async function ask (kind: string, caller: Caller, questions: readonly string[]): Promise<void> {
    await a2a(kind, caller, 'SendMessage', { message: message(caller, pick(questions)) })
  }

  async function mcp (kind: string, caller: Caller, name: string, args: Json): Promise<void> {
    const response = await fetch(`${base}/mcp/a/demo`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': name,
        'x-forwarded-for': caller.address
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: {
          name,
          arguments: args,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'docs-dashboard', version: '1.0.0' },
            'io.modelcontextprotocol/clientCapabilities': {}
          }
        }
      })
    })
    count(kind, outcomeOf(response.status, await response.text()))
  }

  const turns: ReadonlyArray<{ weight: number, run: (caller: Caller) => Promise<void> }> = [
    { weight: 40, run: (caller) => ask('answered', caller, ANSWERED) },
    { weight: 9, run: (caller) => ask('partial', caller, PARTIAL) },
    { weight: 9, run: (caller) => ask('unanswered', caller, UNANSWERED) },
    { weight: 3, run: (caller) => ask('out of scope', caller, OUT_OF_SCOPE) },
    { weight: 4, run: (caller) => ask('unclear', caller, UNCLEAR) },
    {
      // A routine with slots over three turns, then the task read back.
      weight: 4,
      run: async (caller) => {
        await a2a('routine', caller, 'SendMessage', { message: message(caller, 'I would like to book a table') })
        await a2a('routine', caller, 'SendMessage', { message: message(caller, 'date=2026-12-24') })
        const done = await a2a('routine', caller, 'SendMessage', { message: message(caller, 'partySize=4') })
        const taskId = /"task":\{"id":"([^"]+)"/.exec(done)?.[1]
        if (taskId !== undefined) await a2a('GetTask', caller, 'GetTask', { id: taskId })
      }
    },
    {
      weight: 3,
      run: (caller) => a2a('typed call', caller, 'SendMessage', {
        message: message(caller, '', {
          parts: [{ data: { toolName: 'book_table', arguments: { date: '2026-12-31', partySize: 2 } } }],
          extensions: [CONVERSE_EXTENSION_URI],
          metadata: { [CONVERSE_EXTENSION_URI]: { call: { toolName: 'book_table', arguments: { date: '2026-12-31', partySize: 2 } } } }
        })
      }).then(() => undefined)
    },
    { weight: 5, run: (caller) => a2a('streamed', caller, 'SendStreamingMessage', { message: message(caller, pick(ANSWERED)) }).then(() => undefined) },
    { weight: 12, run: (caller) => mcp('mcp ask_agent', caller, 'ask_agent', { message: pick([...ANSWERED, ...ANSWERED, ...UNANSWERED, ...PARTIAL]) }) },
    { weight: 3, run: (caller) => mcp('mcp book_table', caller, 'book_table', { date: '2026-12-24', partySize: 3 }) }
  ]
  const total = turns.reduce((sum, turn) => sum + turn.weight, 0)
  function turn (caller: Caller): Promise<void> {
    let draw = Math.random() * total
    for (const candidate of turns) {
      draw -= candidate.weight
      if (draw < 0) return candidate.run(caller)
    }
    return turns[0].run(caller)
  }

  const callers: Caller[] = Array.from({ length: 40 }, (_, index) => ({ address: `10.0.${index >> 8}.${(index & 255) + 1}`, contextId: randomUUID() }))

  /**
   * One caller past the rate limit: a question every 200 ms for `seconds`, so that after RATE_LIMIT_MAX of them
   * (12 s) the rest of its window is refused, over several scrapes (a counter's first sample has no rate).
   */
  async function burst (seconds: number, stopped: () => boolean): Promise<void> {
    const noisy: Caller = { address: '10.9.9.9', contextId: randomUUID() }
    const sent: Array<Promise<string>> = []
    const end = Date.now() + seconds * 1000
    while (!stopped() && Date.now() < end) {
      sent.push(a2a('noisy caller', noisy, 'SendMessage', { message: message(noisy, pick(ANSWERED)) }))
      await sleep(200)
    }
    await Promise.all(sent)
  }

  /** The load for `seconds`: ticks of 500 ms, the turns per tick following a wave; the noisy caller from half way. */
  return async function run (seconds: number, stopped: () => boolean): Promise<void> {
    const start = Date.now()
    let noisy: Promise<void> | undefined
    while (!stopped() && Date.now() - start < seconds * 1000) {
      const tick = Date.now()
      const elapsed = (tick - start) / 1000
      const perTick = Math.max(1, Math.round(3 + 2.5 * Math.sin(2 * Math.PI * elapsed / 45) + Math.random() * 2))
      const work: Array<Promise<void>> = []
      for (let index = 0; index < perTick; index++) {
        const caller = pick(callers)
        if (Math.random() < 0.1) caller.contextId = randomUUID()
        work.push(turn(caller))
      }
      if (noisy === undefined && elapsed >= seconds * 0.5) noisy = burst(Math.max(20, seconds * 0.3), stopped)
      await Promise.all(work)
      await sleep(Math.max(0, 500 - (Date.now() - tick)))
    }
    await noisy
  }
}

async function untilReady (url: string, what: string, seconds = 30): Promise<void> {
  const deadline = Date.now() + seconds * 1000
  for (;;) {
    try {
      if ((await fetch(url)).ok) return
    } catch {}
    if (Date.now() > deadline) throw new Error(`${what} not ready at ${url} within ${seconds} s`)
    await sleep(250)
  }
}

async function query (prometheus: string, expr: string): Promise<Json[]> {
  const response = await fetch(`${prometheus}/api/v1/query?query=${encodeURIComponent(expr)}`)
  const body = await response.json() as Json
  if (body.status !== 'success') throw new Error(`Prometheus refused ${expr}: ${JSON.stringify(body)}`)
  return body.data.result
}

async function main (): Promise<void> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`)
  const queries = await dashboardQueries()
  const cleanups: Array<() => Promise<unknown>> = []
  let interrupted = false
  const onSignal = (): void => { interrupted = true }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  const check = (): void => { if (interrupted) throw new Error('interrupted') }
  try {
    const dir = await mkdtemp(join(tmpdir(), 'docs-dashboard-'))
    cleanups.push(() => rm(dir, { recursive: true, force: true }))

    const token = randomBytes(24).toString('hex')
    const app = await buildGateway({
      config: loadConfig({
        HOST: '127.0.0.1',
        PORT: '0',
        STATE: 'memory',
        LOG_LEVEL: 'silent',
        METRICS_TOKEN: token,
        TRUST_PROXY: '127.0.0.1',
        RATE_LIMIT_MAX: String(RATE_LIMIT_MAX),
        RATE_LIMIT_WINDOW_MS: '60000'
      })
    })
    cleanups.push(() => app.close())
    await app.listen({ host: '127.0.0.1', port: 0 })
    const gatewayPort = (app.server.address() as AddressInfo).port
    const base = `http://127.0.0.1:${gatewayPort}`
    console.log(`gateway on ${base}`)

    const tokenFile = join(dir, 'metrics-token')
    await writeFile(tokenFile, token, { mode: 0o600 })
    const configFile = join(dir, 'prometheus.yml')
    await writeFile(configFile, await prometheusConfig(`127.0.0.1:${gatewayPort}`, tokenFile))
    const prometheusPort = await freePort()
    const prometheus = `http://127.0.0.1:${prometheusPort}`
    const child = spawn(PROMETHEUS, [
      `--config.file=${configFile}`, `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${prometheusPort}`, '--log.level=warn'
    ], { stdio: ['ignore', 'ignore', 'pipe'] })
    let prometheusLog = ''
    child.stderr?.on('data', (chunk: Buffer) => { prometheusLog = (prometheusLog + chunk.toString()).slice(-4000) })
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve)
      child.once('error', reject)
    })
    cleanups.push(() => stop(child))
    await spawned
    await untilReady(`${prometheus}/-/ready`, 'Prometheus').catch((error: Error) => { throw new Error(`${error.message}\n${prometheusLog}`) })
    const started = Date.now()
    console.log(`Prometheus on ${prometheus}, scraping ${base}/metrics every second`)

    // The target up, then a few seconds of the idle gateway before the load.
    for (;;) {
      check()
      const up = await query(prometheus, 'up{job="a2a-converse"}')
      if (up[0]?.value[1] === '1') break
      if (Date.now() - started > 30_000) throw new Error(`the gateway's target is not up: ${JSON.stringify(up)}\n${prometheusLog}`)
      await sleep(500)
    }
    await sleep(5000)
    console.log(`driving turns for ${SECONDS} s`)
    await traffic(base)(SECONDS, () => interrupted)
    check()
    for (const [kind, outcomes] of tally) console.log(`  ${kind}: ${[...outcomes].map(([outcome, n]) => `${n} ${outcome}`).join(', ')}`)
    // The last scrapes in, then every query must have data: an empty graph is a failed run.
    await sleep(4000)
    for (const { title, expr } of queries) {
      const series = await query(prometheus, expr)
      if (series.length === 0) throw new Error(`"${title}" has no data: ${expr}`)
      console.log(`  ${title}: ${series.length} series`)
    }

    const { chromium } = await import('playwright-core')
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
    cleanups.push(() => browser.close())
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
    const range = Math.ceil((Date.now() - started) / 10_000) * 10
    const params = new URLSearchParams()
    queries.forEach(({ expr }, index) => {
      params.set(`g${index}.expr`, expr)
      params.set(`g${index}.tab`, '0')
      params.set(`g${index}.stacked`, '0')
      params.set(`g${index}.range_input`, `${range}s`)
    })
    await page.goto(`${prometheus}/classic/graph?${params.toString()}`)
    // Every graph drawn (Rickshaw's SVG in each graph area), no request still loading, no query error shown.
    await page.waitForFunction((n) => {
      const document = (globalThis as any).document
      const drawn = document.querySelectorAll('.graph_area .graph svg').length
      const loading = [...document.querySelectorAll('.spinner')].some((spinner: any) => spinner.offsetParent !== null)
      return drawn >= n && !loading
    }, queries.length, { timeout: 30_000 })
    const errors = await page.$$eval('.error.alert', (nodes) => nodes.map((node) => (node as any).innerText.trim()).filter((text: string) => text !== ''))
    if (errors.length > 0) throw new Error(`the graph page shows errors: ${errors.join('; ')}`)
    // The whole page in one viewport (a full-page capture would paint the fixed navigation bar half way down).
    const height = await page.evaluate(() => (globalThis as any).document.documentElement.scrollHeight as number)
    await page.setViewportSize({ width: 1400, height })
    await sleep(1000)
    await page.screenshot({ path: OUTPUT })
    console.log(`saved ${OUTPUT} (${queries.length} graphs over the last ${range} s)`)
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error: Error) => console.error(`cleanup: ${error.message}`))
    }
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}

main().catch((error: Error) => {
  console.error(error.stack ?? error.message)
  process.exitCode = 1
})
