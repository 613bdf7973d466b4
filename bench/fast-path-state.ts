/**
 * What the fast-path switch of a bench child did (bench/fast-path-switches.ts): shared by the replacement
 * module, which counts, and the app builder of bench/fast-paths.ts, which checks and reports the count.
 */
export const switchCounts = {
  /** A2ADispatchers built with `leanSendMessage: false` by the lean switch. */
  dispatchersWithoutLean: 0
}

/** The switches this child was started with (BENCH_FAST_PATHS_OFF, a comma list; `lean` is the one known). */
export function switchesOff (): Set<string> {
  return new Set((process.env.BENCH_FAST_PATHS_OFF ?? '').split(',').map((name) => name.trim()).filter((name) => name !== ''))
}
