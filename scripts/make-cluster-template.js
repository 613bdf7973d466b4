// The build's last step: the embedded database's cluster template in dist/cluster-templates/, so that the gateway's
// first start on a new DATA_DIR unpacks a migrated cluster instead of running PGlite's initdb (≈ 750 MB for a few
// seconds: more than a small container allows) and the migrations (≈ 40 MB PGlite keeps). Made once per installed
// PGlite and migration set (a few seconds, here at build time); kept while both stay, and the templates they replace
// removed (npm pack would ship them). Run from the package root, after the library is compiled.
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { basename, join } from 'node:path'
import { makeClusterTemplate, templateFile } from 'a2a-converse/postgres'

/** Where the gateway looks for its template (src/gateway/postgres-state.ts). */
export const TEMPLATES = join('dist', 'cluster-templates')

const current = await templateFile(TEMPLATES)
if (existsSync(current)) {
  process.stdout.write('build: the embedded database\'s cluster template is up to date\n')
} else {
  process.stdout.write(`build: made ${await makeClusterTemplate(TEMPLATES)}\n`)
  for (const name of readdirSync(TEMPLATES)) {
    if (/^cluster-pglite-.*\.tar\.gz$/.test(name) && name !== basename(current)) rmSync(join(TEMPLATES, name))
  }
}
