import t from 'tap'
import { join } from 'node:path'
import { AgentsFileError, defaultAgentsFile, loadAgentDefinitions } from '../../src/gateway/agent-definitions.js'

const agent = { id: 'shop', name: 'Shop', description: 'Answers shop questions.', documents: './docs' }

t.test('reads JSON and YAML in the three shapes, resolving documents against the file', async (t) => {
  const dir = t.testdir({
    'one.json': JSON.stringify(agent),
    'list.json': JSON.stringify([agent, { ...agent, id: 'other', documents: undefined }]),
    'wrapped.yaml': 'agents:\n  - id: shop\n    name: Shop\n    description: Answers shop questions.\n    documents: ./docs\n',
    'short.yml': 'id: shop\nname: Shop\ndescription: d\n'
  })
  const [one] = await loadAgentDefinitions(join(dir, 'one.json'))
  t.equal(one.documents, join(dir, 'docs'))
  const list = await loadAgentDefinitions(join(dir, 'list.json'))
  t.same(list.map((a) => a.id), ['shop', 'other'])
  t.equal(list[1].documents, undefined)
  const [wrapped] = await loadAgentDefinitions(join(dir, 'wrapped.yaml'))
  t.equal(wrapped.documents, join(dir, 'docs'))
  t.equal((await loadAgentDefinitions(join(dir, 'short.yml')))[0].name, 'Shop')
})

t.test('the demo declaration ships with the package', async (t) => {
  const [demo] = await loadAgentDefinitions(defaultAgentsFile())
  t.equal(demo.id, 'demo')
})

t.test('errors name the file and the field', async (t) => {
  const dir = t.testdir({
    'bad.json': '{ nope',
    'bad.yaml': 'a: [',
    'empty.json': '[]',
    'noname.json': JSON.stringify({ id: 'x', description: 'd' }),
    'badid.json': JSON.stringify([agent, { ...agent, id: 'bad id' }]),
    'twice.json': JSON.stringify([agent, agent]),
    'routine.json': JSON.stringify({ ...agent, routines: [{ name: 'r', description: 'd', exposed: true, toolName: 'bad name', slots: [] }] })
  })
  const expect = async (file: string, pattern: RegExp): Promise<void> => {
    const error = await loadAgentDefinitions(join(dir, file)).then(() => undefined, (e: unknown) => e)
    t.ok(error instanceof AgentsFileError, `${file} rejects with AgentsFileError`)
    t.match((error as Error).message, pattern, file)
  }
  await expect('missing.json', /cannot be read \(ENOENT\)/)
  await expect('bad.json', /is not valid json/)
  await expect('bad.yaml', /is not valid yaml/)
  await expect('empty.json', /declares no agent/)
  await expect('noname.json', /agents\[0\] must have required property 'name'/)
  await expect('badid.json', /agents\[1\]\.id must match pattern/)
  await expect('twice.json', /agents\[1\]\.id "shop" is declared twice/)
  await expect('routine.json', /agent "shop": routine "r": toolName must match/)
})

t.test('a file without a known extension is read as JSON', async (t) => {
  const dir = t.testdir({ agents: JSON.stringify(agent), broken: 'id: shop' })
  t.equal((await loadAgentDefinitions(join(dir, 'agents')))[0].id, 'shop')
  await t.rejects(loadAgentDefinitions(join(dir, 'broken')), { name: 'AgentsFileError', message: /broken: is not valid JSON: / })
  await t.rejects(loadAgentDefinitions(dir), { message: /cannot be read \(EISDIR\)/ }, 'a folder')
})

t.test('a YAML file holding nothing, or an agent that is not an object, names the entry', async (t) => {
  const dir = t.testdir({ 'empty.yaml': '', 'list.yaml': '- just a string\n' })
  await t.rejects(loadAgentDefinitions(join(dir, 'empty.yaml')), { message: /agents\[0\] must be object/ })
  await t.rejects(loadAgentDefinitions(join(dir, 'list.yaml')), { message: /agents\[0\] must be object/ })
})
