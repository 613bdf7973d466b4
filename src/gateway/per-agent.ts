/**
 * One value per agent id, made on first use and kept while the agent is served: a new version of an agent (a change
 * served live, src/gateway/live-agents.ts) gets the task store, push wiring and upstream copies the version before
 * had, so its tasks and push configs carry over (memory state's stores are objects of their own). `forget` drops an
 * unpublished agent's (bounded: the agents served, at most MAX_AGENTS and the agents file's).
 */
export interface PerAgent<A extends unknown[], T> {
  (agentId: string, ...rest: A): T
  forget: (agentId: string) => void
}

export function perAgent<A extends unknown[], T> (make: (agentId: string, ...rest: A) => T): PerAgent<A, T> {
  const made = new Map<string, T>()
  const get = (agentId: string, ...rest: A): T => {
    if (made.has(agentId)) return made.get(agentId) as T
    const value = make(agentId, ...rest)
    made.set(agentId, value)
    return value
  }
  return Object.assign(get, { forget: (agentId: string) => { made.delete(agentId) } })
}
