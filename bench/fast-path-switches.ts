/**
 * Turns the project's fast paths off in a bench child without touching src/: loaded with
 * `node --import <this file>`, it registers module resolution hooks (bench/fast-path-hooks.ts) that give two
 * src modules a bench replacement for one of their imports, as named by BENCH_FAST_PATHS_OFF:
 *
 * - `lean`: the A2A endpoint's `A2ADispatcher` becomes bench/dispatch-without-lean.ts's, which passes
 *   `leanSendMessage: false` (every SendMessage through DefaultRequestHandler.sendMessage, no hand-off
 *   wrappers: the dispatcher as it would be without the lean path);
 * - `splice`: the converse plugin's `useKnownEnvelopeJson` becomes bench/serializer-without-splice.ts's, which
 *   leaves the reply to Fastify's JSON.stringify (the serialized-once envelope JSON is never spliced in).
 *
 * The builders in bench/fast-paths.ts check that each switch reached its target, so a src refactoring that
 * moves the import fails the bench instead of measuring the fast path against itself.
 */
import { register } from 'node:module'
import { switchesOff } from './fast-path-state.js'

const off = switchesOff()
const unknown = [...off].filter((name) => name !== 'lean' && name !== 'splice')
if (unknown.length > 0) throw new Error(`BENCH_FAST_PATHS_OFF: unknown fast path(s) ${unknown.join(', ')} (known: lean, splice)`)
register(new URL('./fast-path-hooks.js', import.meta.url), { data: { lean: off.has('lean'), splice: off.has('splice') } })
