// A module load hook registered after tap's loaders, so Node asks it first. For a project .ts file it answers with
// ts-node's earlier output for the same source, tsconfig and compiler (ts-node's text, inline source map and all:
// coverage and stack traces are as without the cache); otherwise it asks ts-node and keeps the answer. Writes go
// to a temporary file renamed into place, so parallel test processes never read half a file. The cache lives in
// node_modules/.cache (gone with node_modules; `rm -rf node_modules/.cache/a2a-converse-transpiled` clears it).
// A URL with a query (tap's mocks) or outside the project's own files goes to ts-node as before.
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const PROJECT = pathToFileURL(ROOT).href
const CACHE = `${ROOT}node_modules/.cache/a2a-converse-transpiled/`
const SALT = ['tsconfig.json', 'node_modules/@isaacs/ts-node-temp-fork-for-pr-2009/package.json', 'node_modules/typescript/package.json']
  .map((file) => readFileSync(`${ROOT}${file}`, 'utf8')).join('\0')
mkdirSync(CACHE, { recursive: true })

export async function load (url, context, nextLoad) {
  if (!url.startsWith(PROJECT) || !url.endsWith('.ts') || url.includes('/node_modules/')) return nextLoad(url, context)
  const path = fileURLToPath(url)
  const file = `${CACHE}${createHash('sha256').update(SALT).update('\0').update(path).update('\0').update(readFileSync(path)).digest('hex')}.js`
  try {
    return { format: 'module', source: readFileSync(file, 'utf8'), shortCircuit: true }
  } catch {}
  const loaded = await nextLoad(url, context)
  if (loaded.format === 'module' && typeof loaded.source === 'string') {
    const temporary = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`
    writeFileSync(temporary, loaded.source)
    renameSync(temporary, file)
  }
  return loaded
}
