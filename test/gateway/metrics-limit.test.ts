/**
 * /metrics counts its requests per client address (RATE_LIMIT_OPERATOR_MAX per window, a count of its own), before
 * the token is checked: wrong-token guesses are limited (HTTP 429, Retry-After), a right token over the limit gets
 * the same 429 (a refusal says nothing of a guess), and the next window serves the scraper again. On the app's route
 * and on the METRICS_PORT listener, real listening ports both.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { startGateway } from '../fixtures/gateway-helpers.js'
import { call } from '../fixtures/auth.js'
import { parsePrometheus, valueOf } from '../fixtures/prometheus-text.js'

const TOKEN = 'metrics-token-0123456789abcdef'
const get = async (url: string, token: string) => {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
  return { status: response.status, headers: response.headers, text: await response.text() }
}

for (const where of ['the app', 'the METRICS_PORT listener'] as const) {
  t.test(`${where}: wrong tokens count per address; past the limit 429 with Retry-After, the right token too; the next window serves`, async (t) => {
    const { app, base } = await startGateway(t, {
      METRICS_TOKEN: TOKEN, RATE_LIMIT_OPERATOR_MAX: '3', RATE_LIMIT_WINDOW_MS: '1000', ...(where === 'the app' ? {} : { METRICS_PORT: '0' })
    })
    const url = where === 'the app' ? `${base}/metrics` : `http://127.0.0.1:${app.metricsPort as number}/metrics`
    for (let i = 0; i < 3; i++) t.equal((await get(url, `wrong-token-${i}-0123456789`)).status, 401, `guess ${i + 1}`)
    const over = await get(url, 'wrong-token-3-0123456789')
    t.equal(over.status, 429, 'the fourth guess in the window')
    t.ok(Number(over.headers.get('retry-after')) >= 1, 'Retry-After in seconds')
    t.match(over.headers.get('content-type'), /^application\/json/)
    t.match(JSON.parse(over.text), { statusCode: 429, error: 'Too Many Requests', message: /^Rate limit exceeded; retry in \d+ s$/ })
    t.equal((await get(url, TOKEN)).status, 429, 'the right token from that address too: a 429 tells nothing of a guess')
    t.equal((await call(base, 'ListTasks', {})).status, 200, 'the A2A door has its own count')
    await sleep(Number(over.headers.get('retry-after')) * 1000 + 100)
    const scraped = await get(url, TOKEN)
    t.equal(scraped.status, 200, 'the next window serves the scraper')
    t.equal(valueOf(parsePrometheus(scraped.text), 'a2a_converse_rate_limited_total', { door: 'metrics' }), 2, 'the refusals, counted by door')
  })
}

t.test('right-token scrapes count too (a scraper every 15 s uses 4 a minute); RATE_LIMIT_OPERATOR_MAX=0: no limit', async (t) => {
  const { base } = await startGateway(t, { METRICS_TOKEN: TOKEN, RATE_LIMIT_OPERATOR_MAX: '2', RATE_LIMIT_WINDOW_MS: '60000' })
  t.equal((await get(`${base}/metrics`, TOKEN)).status, 200)
  t.equal((await get(`${base}/metrics`, TOKEN)).status, 200)
  t.equal((await get(`${base}/metrics`, TOKEN)).status, 429)
  const unlimited = await startGateway(t, { METRICS_TOKEN: TOKEN, RATE_LIMIT_OPERATOR_MAX: '0' })
  for (let i = 0; i < 20; i++) t.equal((await get(`${unlimited.base}/metrics`, `wrong-token-${i}-0123456789`)).status, 401)
})
