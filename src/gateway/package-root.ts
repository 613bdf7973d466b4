import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The folder holding package.json: the same from src/ (tests) and dist/src/ (npm start). */
export function packageRoot (from: string = fileURLToPath(import.meta.url)): string {
  let dir = dirname(from)
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    /* c8 ignore next -- only reached when the module is copied outside any package */
    if (parent === dir) throw new Error(`no package.json above ${from}`)
    dir = parent
  }
  return dir
}
