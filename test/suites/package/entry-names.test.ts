/**
 * Each entry's names are the ones docs/library.md lists under "Entries and their names", no more and no fewer, and
 * the root entry keeps to a short list (at most 40). The exports are read with the TypeScript compiler from the
 * library's source entries.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { ROOT } from '../../fixtures/gateway-process.js'

// Building a program over the library's entries: a few seconds on a busy machine.
t.setTimeout(120_000)

const LIBRARY = join(ROOT, 'packages', 'a2a-converse')
const manifest = JSON.parse(readFileSync(join(LIBRARY, 'package.json'), 'utf8'))
const entries = Object.keys(manifest.exports as Record<string, unknown>).filter((subpath) => subpath !== './package.json')
const fileOf = (subpath: string) => join(LIBRARY, 'src', `${subpath === '.' ? 'index' : subpath.slice(2)}.ts`)
const specifierOf = (subpath: string) => subpath === '.' ? 'a2a-converse' : `a2a-converse/${subpath.slice(2)}`

/** Each entry's exported names, as the compiler sees them. */
function exportsOf (): Map<string, string[]> {
  const program = ts.createProgram(entries.map(fileOf), {
    module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, skipLibCheck: true, noEmit: true
  })
  const checker = program.getTypeChecker()
  return new Map(entries.map((subpath) => {
    const symbol = checker.getSymbolAtLocation(program.getSourceFile(fileOf(subpath)) as ts.SourceFile) as ts.Symbol
    return [specifierOf(subpath), checker.getExportsOfModule(symbol).map((name) => name.name).sort()]
  }))
}

/** docs/library.md's lists: `- **\`<specifier>\`** (<count>): \`name\`, \`name\`.` */
function documented (): Map<string, string[]> {
  const text = readFileSync(join(ROOT, 'docs', 'library.md'), 'utf8')
  const section = text.slice(text.indexOf('## Entries and their names'))
  return new Map([...section.matchAll(/^- \*\*`([^`]+)`\*\* \((\d+)\): (.+)$/gm)].map((match) => {
    const names = [...match[3].matchAll(/`([^`]+)`/g)].map((name) => name[1]).sort()
    return [match[1], names]
  }))
}

t.test('docs/library.md lists every entry\'s names, and only those', async (t) => {
  const exported = exportsOf()
  const listed = documented()
  t.same([...listed.keys()].sort(), [...exported.keys()].sort(), 'every entry has its list')
  for (const [specifier, names] of exported) t.same(listed.get(specifier), names, specifier)
})

t.test('the root entry is a short list: at most 40 names', async (t) => {
  const root = exportsOf().get('a2a-converse') as string[]
  t.ok(root.length <= 40, `${root.length} names`)
})
