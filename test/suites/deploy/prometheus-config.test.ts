/**
 * deploy/prometheus.yml checked by Prometheus itself (Debian's `prometheus` package: `promtool`, `prometheus`):
 *
 * - `promtool check config` on the file as deployed, only the token file's path rewritten to a temp copy (promtool
 *   checks that the file exists; the container writes it at start);
 * - a real Prometheus (temp dir, free loopback port) running the file's scrape job against a real gateway app with
 *   METRICS_TOKEN: only the target (the gateway on loopback instead of DNS discovery), the scrape interval (1 s) and
 *   the token file's path differ. Its HTTP API shows the target up and, after one turn, the converse metrics with
 *   the gateway's labels; the same job with a wrong token is down with the gateway's 401.
 *
 * Without the binaries on PATH each part reports a skip with the reason, as the browser tests do without Chromium.
 */
import t, { type Test } from 'tap'
import { execFile, spawn } from 'node:child_process'
import { accessSync, constants, readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { parse, stringify } from 'yaml'
import { freePort, rpc, SEED_HEADERS, startGateway, userMessage } from '../../fixtures/gateway-helpers.js'

type Json = Record<string, any>

const DEPLOYED_TEXT = readFileSync('deploy/prometheus.yml', 'utf8')
const INSTALL = 'apt-get install -y --no-install-recommends prometheus'
const TOKEN = 'prometheus-test-token-0123456789'

/** The executable `name` on PATH, or undefined. */
function onPath (name: string): string | undefined {
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    if (folder === '') continue
    try {
      accessSync(join(folder, name), constants.X_OK)
      return join(folder, name)
    } catch {}
  }
  return undefined
}

/** A fresh copy of the deployed file's a2a-converse job. */
function deployedJob (): Json {
  const job = parse(DEPLOYED_TEXT).scrape_configs.find((config: Json) => config.job_name === 'a2a-converse')
  if (job === undefined) throw new Error('deploy/prometheus.yml has no a2a-converse job')
  return job
}

async function tempDir (t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'prometheus-config-test-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

const promtool = onPath('promtool')
if (promtool === undefined) {
  t.test('promtool check config deploy/prometheus.yml', { skip: `no promtool on PATH (${INSTALL})` }, async () => {})
} else {
  t.test('promtool check config: deploy/prometheus.yml, the token file a temp copy', async (t) => {
    const dir = await tempDir(t)
    const tokenFile = join(dir, 'metrics-token')
    await writeFile(tokenFile, TOKEN)
    t.equal(deployedJob().authorization.credentials_file, '/tmp/metrics-token', 'the path the container writes')
    const checked = parse(DEPLOYED_TEXT)
    const job = (config: Json): Json => config.scrape_configs.find((scraped: Json) => scraped.job_name === 'a2a-converse')
    job(checked).authorization.credentials_file = tokenFile
    const back = parse(stringify(checked))
    job(back).authorization.credentials_file = '/tmp/metrics-token'
    t.same(back, parse(DEPLOYED_TEXT), 'the deployed file but for that one path')
    const file = join(dir, 'prometheus.yml')
    await writeFile(file, stringify(checked))
    const { stdout } = await promisify(execFile)(promtool, ['check', 'config', file])
    t.match(stdout, /SUCCESS/)
  })
}

/** Polls `probe` every 250 ms until it returns a value, for up to 30 s; on a timeout the error has `log()`. */
async function until<T> (what: string, log: () => string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const value = await probe().catch(() => undefined)
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; Prometheus said:\n${log()}`)
    await sleep(250)
  }
}

const prometheus = onPath('prometheus')
if (prometheus === undefined) {
  t.test('a real Prometheus scraping a gateway through deploy/prometheus.yml', { skip: `no prometheus on PATH (${INSTALL})` }, async () => {})
} else {
  t.test("a real Prometheus scrapes a real gateway through deploy/prometheus.yml's job", async (t) => {
    const { base, port } = await startGateway(t, { METRICS_TOKEN: TOKEN })
    const dir = await tempDir(t)
    const tokenFile = join(dir, 'metrics-token')
    await writeFile(tokenFile, TOKEN)
    const wrongTokenFile = join(dir, 'wrong-token')
    await writeFile(wrongTokenFile, 'not-the-metrics-token-0123456789')

    const deployed = parse(DEPLOYED_TEXT)
    const { dns_sd_configs: discovered, ...job } = deployedJob()
    t.ok(discovered, 'the deployed job finds the replicas by DNS; here the one gateway is a static target')
    const scraped = (name: string, credentialsFile: string): Json => ({
      ...job,
      job_name: name,
      scrape_interval: '1s',
      authorization: { ...job.authorization, credentials_file: credentialsFile },
      static_configs: [{ targets: [`127.0.0.1:${port}`] }]
    })
    const config = {
      global: { ...deployed.global, scrape_interval: '1s', evaluation_interval: '1s' },
      scrape_configs: [scraped(job.job_name, tokenFile), scraped('wrong-token', wrongTokenFile)]
    }
    const configFile = join(dir, 'prometheus.yml')
    await writeFile(configFile, stringify(config))

    const prometheusPort = await freePort()
    const api = `http://127.0.0.1:${prometheusPort}/api/v1`
    const child = spawn(prometheus, [
      `--config.file=${configFile}`, `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${prometheusPort}`, '--log.level=warn'
    ], { stdio: ['ignore', 'ignore', 'pipe'] })
    let log = ''
    child.stderr.on('data', (chunk: Buffer) => { log = (log + chunk.toString()).slice(-4000) })
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    t.teardown(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    })

    const targets = await until('both targets scraped', () => log, async () => {
      const body = await (await fetch(`${api}/targets`)).json() as Json
      const active: Json[] = body.data.activeTargets
      return active.length === 2 && active.every((target) => target.health !== 'unknown') ? active : undefined
    })
    const byJob = Object.fromEntries(targets.map((target) => [target.labels.job, target]))
    t.match(byJob['a2a-converse'], { health: 'up', scrapeUrl: `http://127.0.0.1:${port}/metrics`, labels: { instance: `127.0.0.1:${port}` } })
    t.match(byJob['wrong-token'], { health: 'down', lastError: /401/ }, 'the token is what lets it in')

    // One turn, then its counts as Prometheus reads them.
    const reply = await fetch(`${base}/a2a/demo`, { method: 'POST', headers: SEED_HEADERS, body: rpc('SendMessage', { message: userMessage('How long do I have to return an order?') }) })
    t.equal(reply.status, 200)
    await reply.arrayBuffer()
    const query = async (expr: string): Promise<Json[] | undefined> => {
      const body = await (await fetch(`${api}/query?query=${encodeURIComponent(expr)}`)).json() as Json
      return body.data.result.length > 0 ? body.data.result : undefined
    }
    const labels = { job: 'a2a-converse', instance: `127.0.0.1:${port}`, agent: 'demo' }
    const answers = await until('the answer counted', () => log, () => query('a2a_converse_answers_total{job="a2a-converse"}'))
    t.same(answers.map((sample) => [sample.metric, sample.value[1]]), [[
      { __name__: 'a2a_converse_answers_total', ...labels, availability: 'assessed', coverage: 'answered', reason: 'sufficient_evidence' },
      '1'
    ]])
    const requests = await until('the request counted', () => log, () => query('a2a_converse_requests_total{job="a2a-converse"}'))
    t.same(requests.map((sample) => [sample.metric, sample.value[1]]), [[
      { __name__: 'a2a_converse_requests_total', ...labels, binding: 'jsonrpc', method: 'SendMessage', code: 'ok' },
      '1'
    ]])
    t.same(await query('a2a_converse_requests_total{job="wrong-token"}'), undefined, 'nothing from the refused scrape')
  })
}
