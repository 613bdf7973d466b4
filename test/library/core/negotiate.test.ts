import t from 'tap'
import {
  CONVERSE_EXTENSION_URI, CONVERSE_EXTENSION_DESCRIPTION, EXTENSIONS_HEADER
} from '../../../packages/a2a-converse/src/core/uri.js'
import {
  MAX_HEADER_CHARS, MAX_REQUESTED, formatExtensionsHeader, negotiate, parseExtensionsHeader
} from '../../../packages/a2a-converse/src/core/negotiate.js'

const URI = CONVERSE_EXTENSION_URI
const OTHER = 'https://example.com/ext/other/v1'
const declared = new Set([URI, OTHER])

t.test('the URI constant is the spec URI, version in the path', async (t) => {
  t.equal(URI, 'https://docs.radioso.ai/reference/a2a-converse-extension/v1')
  t.equal(EXTENSIONS_HEADER, 'A2A-Extensions')
  t.equal(CONVERSE_EXTENSION_DESCRIPTION,
    "Radioso conversation extension. params.mcp names this agent's MCP endpoint and server card; " +
    'params.tools lists each exposed routine with the JSON Schema of its input.')
})

t.test('parseExtensionsHeader', async (t) => {
  t.same(parseExtensionsHeader(undefined), [], 'no header')
  t.same(parseExtensionsHeader(''), [], 'empty header')
  t.same(parseExtensionsHeader([]), [], 'no header lines')
  t.same(parseExtensionsHeader(`${URI}`), [URI], 'one item')
  t.same(parseExtensionsHeader(`  ${URI}\t,\t${OTHER}  `), [URI, OTHER], 'whitespace trimmed')
  t.same(parseExtensionsHeader(`,, ,${URI},,\t,`), [URI], 'empty items dropped')
  t.same(parseExtensionsHeader(`${URI}, ${URI},${OTHER}, ${URI}`), [URI, OTHER], 'duplicates dropped, order kept')
  t.same(parseExtensionsHeader([`${OTHER}, a`, ` ${URI} `, 'a']), [OTHER, 'a', URI], 'several lines are one list')
  t.same(parseExtensionsHeader(['a,', ',b']), ['a', 'b'], 'lines joined with a comma, not glued')
})

t.test('negotiate: exact URI match activates', async (t) => {
  t.same(negotiate(URI, declared), { requested: [URI], activated: [URI] })
  t.same(negotiate(`${OTHER}, ${URI}`, declared), { requested: [OTHER, URI], activated: [OTHER, URI] })
  t.same(negotiate([`x, ${URI}`, OTHER], declared), { requested: ['x', URI, OTHER], activated: [URI, OTHER] })
  t.same(negotiate(`${URI},${URI}`, declared).activated, [URI], 'a duplicate activates once')
})

t.test('negotiate: near misses do not activate and do not fall back', async (t) => {
  const misses = [
    `${URI}/`, // trailing slash
    URI.toUpperCase(), // other case
    'https://docs.radioso.ai/reference/a2a-converse-extension/V1',
    'HTTPS://docs.radioso.ai/reference/a2a-converse-extension/v1',
    'https://docs.radioso.ai/reference/a2a-converse-extension/v2', // other version
    'https://docs.radioso.ai/reference/a2a-converse-extension', // no version
    'https://docs.radioso.ai/reference/a2a-converse-extension/',
    'https://docs.radioso.ai/reference/a2a-converse-extension/v1.0',
    'https://docs.radioso.ai/reference/a2a-converse-extension/v10',
    'http://docs.radioso.ai/reference/a2a-converse-extension/v1',
    `"${URI}"`,
    `<${URI}>`,
    `${URI};q=1`
  ]
  for (const miss of misses) {
    const result = negotiate(miss, declared)
    t.same(result.activated, [], `${miss} activates nothing`)
    t.same(result.requested, [miss], 'but is reported as requested')
  }
  t.same(negotiate(misses.join(', '), declared).activated, [], 'all of them together: still nothing (no fallback)')
  t.same(negotiate(`${URI}/v2, ${URI}`, new Set([OTHER])).activated, [], 'not declared: nothing')
})

t.test('negotiate: no header or empty header', async (t) => {
  t.same(negotiate(undefined, declared), { requested: [], activated: [] })
  t.same(negotiate('', declared), { requested: [], activated: [] })
  t.same(negotiate(' , ,', declared), { requested: [], activated: [] })
})

t.test('negotiate: CR/LF and control characters never activate nor survive into the echo', async (t) => {
  const attempts = [
    `${URI}\r\nX-Injected: 1`,
    `x\r\n${URI}x`,
    `${URI}\u0000`,
    `\u0000${URI}`,
    `${URI}\nSet-Cookie: a=b`
  ]
  for (const attempt of attempts) {
    const { activated } = negotiate(attempt, declared)
    t.same(activated, [], JSON.stringify(attempt))
    t.equal(formatExtensionsHeader(activated), undefined)
  }
  // Trimming is whitespace trimming: a URI alone on a folded line still matches exactly, and the echo only
  // ever holds declared URIs.
  const folded = negotiate(`\r\n ${URI} \r\n`, declared)
  t.same(folded.activated, [URI])
  t.equal(formatExtensionsHeader(folded.activated), URI)
  t.notMatch(formatExtensionsHeader(folded.activated) as string, /[\r\n]/)
})

t.test('negotiate: an 8 KB header of junk activates nothing and requests at most the cap', async (t) => {
  const junk = Array.from({ length: 8 * 1024 }, (_, i) => String.fromCharCode(33 + (i * 7919) % 94)).join('')
  t.equal(junk.length, 8192)
  t.same(negotiate(junk, declared).activated, [])
  t.ok(negotiate(junk, declared).requested.length <= MAX_REQUESTED)
})

t.test('negotiate: 1000 items are capped and activate nothing unexpected', async (t) => {
  const items = Array.from({ length: 1000 }, (_, i) => `https://example.com/junk/${i}`)
  const result = negotiate(items.join(','), declared)
  t.equal(result.requested.length, MAX_REQUESTED, 'requested is capped')
  t.same(result.requested, items.slice(0, MAX_REQUESTED), 'the first items, in order')
  t.same(result.activated, [])

  const withUri = negotiate([URI, ...items].join(','), declared)
  t.same(withUri.activated, [URI], 'a declared URI among the first items activates')
  const manyLines = negotiate([...items.slice(0, 10), URI, ...items.slice(10)], declared)
  t.same(manyLines.activated, [URI], 'as several header lines too')
  t.same(negotiate(Array(1000).fill(URI).join(','), declared), { requested: [URI], activated: [URI] },
    '1000 copies of the URI are one item')
  const late = negotiate([...items, URI].join(','), declared)
  t.same(late.activated, [], 'items past the cap are not looked at')
})

t.test('negotiate: an over-long header is cut at an item boundary', async (t) => {
  // The cut must not turn …/v10 into …/v1.
  const filler = 'x'.repeat(MAX_HEADER_CHARS - URI.length - 1)
  const header = `${filler},${URI}0`
  t.ok(header.length > MAX_HEADER_CHARS)
  t.equal(`${filler},${URI}`.length, MAX_HEADER_CHARS, 'the plain cut would land right after …/v1')
  const result = negotiate(header, declared)
  t.same(result.activated, [], 'a cut URI never activates')
  t.same(result.requested, [filler])

  t.same(negotiate('y'.repeat(MAX_HEADER_CHARS + 10), declared), { requested: [], activated: [] },
    'one over-long item: nothing')
  t.same(negotiate(`${URI},${'z'.repeat(MAX_HEADER_CHARS)}`, declared).activated, [URI],
    'complete items before the cut still count')
})

t.test('formatExtensionsHeader', async (t) => {
  t.equal(formatExtensionsHeader([]), undefined, 'omitted when nothing was activated')
  t.equal(formatExtensionsHeader([URI]), URI)
  t.equal(formatExtensionsHeader([OTHER, URI]), `${OTHER}, ${URI}`)
})
