/**
 * The walkthrough's knowledge answers (docs/walkthrough.md), verbatim: each `send '…'` of that block against the demo agent
 * gives the verdict (and citations) its `# →` line says.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { SEED_HEADERS, startGateway, URI } from '../fixtures/gateway-helpers.js'
import { ROOT } from '../fixtures/gateway-process.js'

const readme = readFileSync(join(ROOT, 'docs', 'walkthrough.md'), 'utf8')
const start = readme.indexOf('**Knowledge answers**')
const block = readme.slice(readme.indexOf('```sh\n', start) + 6, readme.indexOf('```\n', readme.indexOf('```sh\n', start) + 6))
const examples = [...block.matchAll(/^send '(.+)'\n# → (\w+) \/ (\w+)(?:, citing "([^"]+)"|: "([^"…]+)…", citing "([^"]+)"|, no citations)\n/gm)]
  .map(([, body, coverage, reason, cited, prefix, citedToo]) => ({ body, coverage, reason, citation: cited ?? citedToo, prefix }))

t.test('the block shows every verdict the text names', async (t) => {
  t.equal(examples.length, block.split('\n').filter((line) => line.startsWith('send ')).length, 'every command has its verdict line')
  t.same(examples.map((example) => `${example.coverage}/${example.reason}`), [
    'answered/sufficient_evidence', 'partial/insufficient_evidence', 'unanswered/insufficient_evidence',
    'unanswered/intentional_scope_boundary', 'unclear/ambiguous_request'
  ])
})

t.test('each command gets the verdict its line says', async (t) => {
  const { base } = await startGateway(t)
  for (const example of examples) {
    const reply = await (await fetch(`${base}/a2a/demo`, { method: 'POST', headers: SEED_HEADERS, body: example.body })).json() as Record<string, any>
    const message = reply.result.message
    const envelope = message.metadata[URI]
    const question = JSON.parse(example.body).params.message.parts[0].text as string
    t.match(envelope.answerCoverage, { availability: 'assessed', coverage: example.coverage, reason: example.reason }, question)
    if (example.citation === undefined) {
      t.same(envelope.citations ?? [], [], `${question}: no citations`)
    } else {
      t.equal(envelope.citations[0].title, example.citation, `${question}: cites ${example.citation}`)
    }
    if (example.prefix !== undefined) t.ok(message.parts[0].text.startsWith(example.prefix), `${question}: "${example.prefix}…"`)
  }
})
