/**
 * What the fast-path switches of a bench child did (bench/fast-path-switches.ts): shared by the replacement
 * modules, which count, and the app builders of bench/fast-paths.ts, which check and report the counts.
 */
export const switchCounts = {
  /** A2ADispatchers built with `leanSendMessage: false` by the lean switch. */
  dispatchersWithoutLean: 0,
  /** Whether the converse plugin got the serializer without the splice. */
  serializerReplaced: false,
  /** Replies whose known envelope JSON the converse plugin asked to splice in (and the splice switch refused). */
  splicesRefused: 0
}

/** The switches this child was started with (BENCH_FAST_PATHS_OFF, a comma list of `lean` and `splice`). */
export function switchesOff (): Set<string> {
  return new Set((process.env.BENCH_FAST_PATHS_OFF ?? '').split(',').map((name) => name.trim()).filter((name) => name !== ''))
}
