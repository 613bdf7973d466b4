/**
 * The dispatcher module as the A2A endpoint sees it with the lean switch on (bench/fast-path-switches.ts):
 * the same A2ADispatcher, except that every one is built with `leanSendMessage: false`. The real module is the
 * library's own file (not an export of it), found beside the library's service entry and imported from here, the
 * one importer bench/fast-path-hooks.ts does not redirect.
 */
import { switchCounts } from './fast-path-state.js'

type DispatcherClass = new (options: Record<string, unknown>) => object
const realUrl = new URL('./backends/local/dispatch.js', import.meta.resolve('a2a-converse/service'))
const { A2ADispatcher: Dispatcher } = await import(realUrl.href) as { A2ADispatcher: DispatcherClass }

export class A2ADispatcher extends Dispatcher {
  constructor (options: Record<string, unknown>) {
    super({ ...options, leanSendMessage: false })
    switchCounts.dispatchersWithoutLean++
  }
}
