/** Upstream agents in AGENTS_FILE: the minimal form as the issue writes it, and errors naming the agent and field. */
import t from 'tap'
import { join } from 'node:path'
import { AgentsFileError, loadAgentDefinitions } from '../../src/gateway/agent-definitions.js'

t.test('the minimal form loads exactly as written; name and description are optional for an upstream agent', async (t) => {
  const dir = t.testdir({
    'agents.json': '{ "id": "shop", "upstream": { "url": "http://agent.internal:9000/" } }',
    'full.yaml': [
      'agents:',
      '  - id: shop',
      '    name: Shop',
      '    upstream:',
      '      url: https://agent.internal/a2a/',
      '      headers: { authorization: Bearer k }',
      '      timeoutMs: 5000',
      '      connectTimeoutMs: 1000',
      '      streamIdleTimeoutMs: 60000',
      '      cardTtlMs: 60000',
      '      maxResponseBytes: 1048576',
      '      errorDetails: full',
      '    envelopeProvider: { url: "http://envelopes.internal/envelope", timeoutMs: 500 }',
      ''
    ].join('\n')
  })
  t.same(await loadAgentDefinitions(join(dir, 'agents.json')), [{ id: 'shop', upstream: { url: 'http://agent.internal:9000/' } }])
  const [full] = await loadAgentDefinitions(join(dir, 'full.yaml'))
  t.same(full.upstream?.headers, { authorization: 'Bearer k' })
  t.equal(full.upstream?.errorDetails, 'full')
  t.same(full.envelopeProvider, { url: 'http://envelopes.internal/envelope', timeoutMs: 500 })
})

t.test('errors name the agent and the field', async (t) => {
  const files: Record<string, unknown> = {
    'nourl.json': { id: 'shop', upstream: {} },
    'badurl.json': { id: 'shop', upstream: { url: 'agent.internal:9000' } },
    'unknown.json': { id: 'shop', upstream: { url: 'http://a/', retries: 3 } },
    'timeout.json': { id: 'shop', upstream: { url: 'http://a/', timeoutMs: 0 } },
    'headers.json': { id: 'shop', upstream: { url: 'http://a/', headers: { 'x-key': 1 } } },
    'details.json': { id: 'shop', upstream: { url: 'http://a/', errorDetails: 'verbose' } },
    'executor.json': { id: 'shop', upstream: { url: 'http://a/' }, executor: 'knowledge' },
    'documents.json': { id: 'shop', upstream: { url: 'http://a/' }, documents: './docs' },
    'provider.json': { id: 'shop', upstream: { url: 'http://a/' }, envelopeProvider: { url: 'nope' } },
    'local.json': { id: 'shop', description: 'no upstream, no name' }
  }
  const dir = t.testdir(Object.fromEntries(Object.entries(files).map(([name, value]) => [name, JSON.stringify(value)])))
  const expect = async (file: string, pattern: RegExp): Promise<void> => {
    const error = await loadAgentDefinitions(join(dir, file)).then(() => undefined, (e: unknown) => e)
    t.ok(error instanceof AgentsFileError, `${file} rejects with AgentsFileError`)
    t.match((error as Error).message, pattern, file)
  }
  await expect('nourl.json', /agents\[0\]\.upstream must have required property 'url'/)
  await expect('badurl.json', /agents\[0\]\.upstream\.url must match pattern/)
  await expect('unknown.json', /agents\[0\]\.upstream must NOT have additional properties/)
  await expect('timeout.json', /agents\[0\]\.upstream\.timeoutMs must be >= 1/)
  await expect('headers.json', /agents\[0\]\.upstream\.headers\.x-key must be string/)
  await expect('details.json', /agents\[0\]\.upstream\.errorDetails must be equal to one of the allowed values: "code", "full"/)
  await expect('executor.json', /agents\[0\]\.executor does not apply to an upstream agent \(proxy mode\)/)
  await expect('documents.json', /agents\[0\]\.documents does not apply to an upstream agent/)
  await expect('provider.json', /agents\[0\]\.envelopeProvider\.url must match pattern/)
  await expect('local.json', /agents\[0\] must have required property 'name'/)
})
