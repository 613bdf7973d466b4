// The build's last step: the embedded database's cluster template in dist/cluster-templates/, so that the gateway's
// first start on a new DATA_DIR unpacks a cluster instead of running PGlite's initdb (≈ 750 MB for a few seconds:
// more than a small container allows). Made once per installed PGlite (a few seconds, here at build time); kept while
// that version stays. Run from the package root, after the library is compiled.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { makeClusterTemplate, templateFile } from 'a2a-converse/postgres'

/** Where the gateway looks for its template (src/gateway/postgres-state.ts). */
export const TEMPLATES = join('dist', 'cluster-templates')

if (existsSync(await templateFile(TEMPLATES))) {
  process.stdout.write('build: the embedded database\'s cluster template is up to date\n')
} else {
  process.stdout.write(`build: made ${await makeClusterTemplate(TEMPLATES)}\n`)
}
