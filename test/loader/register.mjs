// tap's TypeScript loader (ts-node) transpiles every source file again in every test process and in every child a
// test starts: about half of a test file's CPU time. package.json's tap `node-arg` adds this module, which puts
// test/loader/transpile-cache.mjs in front of ts-node so that a file is transpiled once per change.
import { register } from 'node:module'

register(new URL('./transpile-cache.mjs', import.meta.url))
