import t from 'tap'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'
import { KnowledgeBaseError } from '../../../packages/a2a-converse/src/runtime/knowledge-base.js'
import { loadDocuments, loadKnowledgeBase, parseDocument, type KnowledgeDeclaration } from '../../../packages/a2a-converse/src/runtime/load-documents.js'

const FIXTURES = fileURLToPath(new URL('./fixtures/knowledge/', import.meta.url))
const DEMO_DIR = fileURLToPath(new URL('../../../examples/demo/', import.meta.url))

t.test('parseDocument reads the front matter and keeps the body', async (t) => {
  t.same(parseDocument('---\nid: a\ntitle: A title\n---\n# Heading\n\nBody.\n', 'a.md'), {
    id: 'a', title: 'A title', body: '# Heading\n\nBody.\n'
  })
  t.same(parseDocument('\uFEFF---\r\nid: b\r\ntitle: B\r\nsourceUrl: https://example.com/b\r\n---', 'b.md'), {
    id: 'b', title: 'B', body: '', sourceUrl: 'https://example.com/b'
  }, 'BOM, CRLF, no body')
  t.notOk('sourceUrl' in parseDocument('---\nid: c\ntitle: C\nsourceUrl: ""\n---\n', 'c.md'), 'an empty sourceUrl is no sourceUrl')
  t.notOk('sourceUrl' in parseDocument('---\nid: c\ntitle: C\nsourceUrl:\n---\n', 'c.md'), 'a null sourceUrl is no sourceUrl')
})

t.test('parseDocument names the file and the problem', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['no front matter', /x\.md: missing front matter/],
    ['---\nid: [unclosed\n---\n', /x\.md: invalid front matter/],
    ['---\n- a list\n---\n', /x\.md: front matter must be a mapping/],
    ['---\n42\n---\n', /front matter must be a mapping/],
    ['---\n~\n---\n', /front matter must be a mapping/],
    ['---\ntitle: T\n---\n', /x\.md: front matter needs an "id" string/],
    ['---\nid: 5\ntitle: T\n---\n', /needs an "id" string/],
    ['---\nid: a\n---\n', /x\.md: front matter needs a "title" string/],
    ['---\nid: a\ntitle: ""\n---\n', /needs a "title" string/],
    ['---\nid: a\ntitle: T\nsourceUrl: [1]\n---\n', /x\.md: "sourceUrl" must be a string/]
  ]
  for (const [source, message] of cases) t.throws(() => parseDocument(source, 'x.md'), message)
  t.throws(() => parseDocument('', 'x.md'), KnowledgeBaseError)
})

t.test('loadDocuments reads the *.md files of one folder, in name order', async (t) => {
  const documents = await loadDocuments(`${FIXTURES}docs`)
  t.same(documents.map((document) => document.id), ['lockers', 'parcels'], 'notes.txt and the nested folder are skipped')
  t.same(documents[0], { id: 'lockers', title: 'Parcel lockers', body: documents[0].body }, 'a null sourceUrl is left out')
  t.match(documents[0].body, /^Parcel lockers are open around the clock\.\r?\n$/, 'CRLF front matter (a checkout may normalise the body)')
  t.same(documents[1], { id: 'parcels', title: 'Parcels', body: 'Parcels are delivered on weekdays.\n', sourceUrl: 'https://example.com/parcels' })
  await t.rejects(loadDocuments(`${FIXTURES}missing`), { code: 'ENOENT' })
})

t.test('loadKnowledgeBase builds what a declaration describes', async (t) => {
  const declaration = parse(await readFile(`${FIXTURES}agent.yaml`, 'utf8')) as KnowledgeDeclaration
  const kb = await loadKnowledgeBase(declaration, FIXTURES, { replies: { unanswered: 'No idea.' } })
  t.same(kb.chunks.map((chunk) => chunk.id), ['lockers#0', 'parcels#0'])
  t.same(kb.outOfScopeTopics, ['weather'])
  t.equal(kb.answer('When are parcels delivered?').citations[0].sourceUrl, 'https://example.com/parcels')
  t.equal(kb.answer('Do you sell umbrellas?').text, 'No idea.')
  t.equal(kb.answer('How is the weather?').coverage.reason, 'intentional_scope_boundary')

  const empty = await loadKnowledgeBase({}, FIXTURES)
  t.same(empty.documents, [], 'no documents folder, no documents')
})

t.test('the demo declaration', async (t) => {
  const declaration = JSON.parse(await readFile(`${DEMO_DIR}agent.json`, 'utf8')) as Record<string, unknown>
  t.equal(declaration.id, 'demo')
  t.type(declaration.name, 'string')
  t.type(declaration.description, 'string')
  t.equal(declaration.documents, './documents')
  t.ok(Array.isArray(declaration.outOfScope))
  const documents = await loadDocuments(`${DEMO_DIR}documents`)
  t.same(documents.map((document) => document.title), ['Opening hours', 'Returns policy', 'Shipping', 'Warranty'])
  const withUrl = documents.filter((document) => document.sourceUrl !== undefined)
  t.equal(withUrl.length, 1, 'exactly one document has a sourceUrl')
  t.match(withUrl[0].sourceUrl, /^https:\/\//)
})
