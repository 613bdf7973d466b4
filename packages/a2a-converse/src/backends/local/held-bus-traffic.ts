/**
 * An agent's bus traffic held back, then forwarded (the lean SendMessage path's hand-off, sdk-internals.ts): held
 * until a bus to replay it onto is given, replayed there in order, and every later entry forwarded as it comes.
 * Plain bookkeeping over the SDK's public ExecutionEventBus: nothing here reaches into the SDK.
 */
import type { AgentExecutionEvent, ExecutionEventBus } from '@a2a-js/sdk/server'

export type BusEntry = { kind: 'event', event: AgentExecutionEvent } | { kind: 'finished' }

export class HeldBusTraffic {
  readonly #held: BusEntry[] = []
  #target: ExecutionEventBus | undefined

  push (entry: BusEntry): void {
    if (this.#target === undefined) this.#held.push(entry)
    else deliver(this.#target, entry)
  }

  /** Replays what was held onto `bus`, then forwards every later entry to it. */
  forwardTo (bus: ExecutionEventBus): void {
    this.#target = bus
    for (const entry of this.#held.splice(0)) deliver(bus, entry)
  }
}

function deliver (bus: ExecutionEventBus, entry: BusEntry): void {
  if (entry.kind === 'event') bus.publish(entry.event)
  else bus.finished()
}
