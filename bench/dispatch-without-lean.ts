/**
 * The dispatcher module as the A2A endpoint sees it with the lean switch on (bench/fast-path-switches.ts):
 * the same exports, except that every A2ADispatcher is built with `leanSendMessage: false`.
 */
import { A2ADispatcher as Dispatcher, type DispatcherOptions } from '../src/backends/local/dispatch.js'
import { switchCounts } from './fast-path-state.js'

export * from '../src/backends/local/dispatch.js'

export class A2ADispatcher extends Dispatcher {
  constructor (options: DispatcherOptions) {
    super({ ...options, leanSendMessage: false })
    switchCounts.dispatchersWithoutLean++
  }
}
