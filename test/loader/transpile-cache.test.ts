/**
 * The test suite's transpile cache (test/loader/transpile-cache.mjs): a project .ts file is transpiled by ts-node
 * once per content, and what a hit returns is exactly what ts-node answered; anything else goes to ts-node.
 */
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
// @ts-expect-error: a plain .mjs loader module, no declarations
import { load } from './transpile-cache.mjs'

interface Loaded { format: string, source?: string, shortCircuit?: boolean }
type NextLoad = (url: string, context: object) => Promise<Loaded>
const cachedLoad = load as (url: string, context: object, next: NextLoad) => Promise<Loaded>

function transpiler () {
  const asked: string[] = []
  const next: NextLoad = async (url) => {
    asked.push(url)
    return { format: 'module', source: `// transpiled #${asked.length}\n` }
  }
  return { asked, next }
}

t.test('a project .ts file: ts-node once per content, then its very answer from the cache', async (t) => {
  const dir = t.testdir({ 'a.ts': `export const a: number = ${Math.random()}\n` })
  const url = pathToFileURL(join(dir, 'a.ts')).href
  const { asked, next } = transpiler()
  t.same(await cachedLoad(url, {}, next), { format: 'module', source: '// transpiled #1\n' }, 'a miss answers what ts-node answered')
  t.same(await cachedLoad(url, {}, next), { format: 'module', source: '// transpiled #1\n', shortCircuit: true }, 'a hit: the same text')
  t.equal(asked.length, 1, 'ts-node was asked once')
  writeFileSync(join(dir, 'a.ts'), `export const a: number = ${Math.random()}\n`)
  t.same(await cachedLoad(url, {}, next), { format: 'module', source: '// transpiled #2\n' }, 'changed content: ts-node again')
  t.equal(asked.length, 2)
})

t.test('anything else goes to ts-node every time: queries (tap mocks), packages, other extensions, CommonJS', async (t) => {
  const dir = t.testdir({ 'a.ts': `export const a = ${Math.random()}\n`, 'b.js': 'export {}\n' })
  const { asked, next } = transpiler()
  const urls = [
    `${pathToFileURL(join(dir, 'a.ts')).href}?tapmock=1`,
    pathToFileURL(join(dir, 'b.js')).href,
    pathToFileURL(join(dir, 'node_modules', 'x', 'index.ts')).href,
    'node:fs'
  ]
  for (const url of urls) {
    await cachedLoad(url, {}, next)
    await cachedLoad(url, {}, next)
  }
  t.equal(asked.length, urls.length * 2)
  const commonJs: NextLoad = async () => ({ format: 'commonjs', source: 'module.exports = 1\n' })
  const cjs = pathToFileURL(join(dir, 'a.ts')).href
  t.same(await cachedLoad(cjs, {}, commonJs), { format: 'commonjs', source: 'module.exports = 1\n' })
  const again = await cachedLoad(cjs, {}, next)
  t.same(again, { format: 'module', source: `// transpiled #${asked.length}\n` }, 'CommonJS output was not kept: ts-node is asked again')
})
