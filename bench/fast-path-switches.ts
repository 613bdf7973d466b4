/**
 * Turns the lean SendMessage path off in a bench child without touching src/: loaded with
 * `node --import <this file>`, it registers module resolution hooks (bench/fast-path-hooks.ts) that, when
 * BENCH_FAST_PATHS_OFF names `lean`, give every importer of the dispatcher bench/dispatch-without-lean.ts
 * instead, whose `A2ADispatcher` passes `leanSendMessage: false` (every SendMessage through
 * DefaultRequestHandler.sendMessage, no hand-off wrappers: the dispatcher as it would be without the lean path).
 *
 * The builder in bench/fast-paths.ts checks that the switch reached a dispatcher, so a src refactoring that
 * bypasses the module fails the bench instead of measuring the fast path against itself.
 */
import { register } from 'node:module'
import { switchesOff } from './fast-path-state.js'

const off = switchesOff()
const unknown = [...off].filter((name) => name !== 'lean')
if (unknown.length > 0) throw new Error(`BENCH_FAST_PATHS_OFF: unknown fast path(s) ${unknown.join(', ')} (known: lean)`)
register(new URL('./fast-path-hooks.js', import.meta.url), { data: { lean: off.has('lean') } })
