/**
 * Each caller's share of the gateway's work: at most MAX_BYTES_IN_FLIGHT_PER_CALLER request bytes of one caller
 * (walk-ins: one client address) are being read and served at once; the caller's further requests wait, in the order
 * they came, without their bodies being read. What a request costs (reading and parsing its body, searching and
 * storing its text) grows with its size, so one caller keeping several maximum-size messages in flight would
 * otherwise hold the event loop for everyone else (issue 41; bench/big-bodies.ts). A request is always let in when
 * its caller has nothing in flight, so a body of up to BODY_LIMIT always gets served.
 *
 * The wait is bounded by what bounds the request itself: the connection count (MAX_CONNECTIONS) and Node's request
 * timeout (REQUEST_TIMEOUT_MS), which closes a connection whose body was not read in time; a waiting request whose
 * client is gone leaves the queue.
 */

/** What a request takes from its caller's share besides its body, so that bodiless requests count too. */
export const REQUEST_OVERHEAD_BYTES = 1024

export interface CallerShare {
  /**
   * Waits until `key` may have `bytes` more in flight, then holds them: resolves with the function that gives them
   * back (once; later calls do nothing), or with undefined when `gone` fired first (nothing is held).
   */
  hold (key: string, bytes: number, gone: AbortSignal): Promise<(() => void) | undefined>
  /** Keys with bytes in flight or requests waiting (for tests: it is 0 once everything was given back). */
  readonly size: number
}

interface Waiter { bytes: number, admit: () => void }
interface Share { held: number, waiting: Waiter[] }

/** A caller share of `maxBytes` per key; 0: no limit (every hold is granted at once). */
export function callerShare (maxBytes: number): CallerShare {
  const shares = new Map<string, Share>()

  function grant (key: string, share: Share, bytes: number): () => void {
    share.held += bytes
    let held = true
    return () => {
      if (!held) return
      held = false
      share.held -= bytes
      admitWaiting(key, share)
    }
  }

  /** Lets in the waiting requests at the head of the queue that fit now; forgets a key with nothing left. */
  function admitWaiting (key: string, share: Share): void {
    while (share.waiting.length > 0 && fits(share, share.waiting[0].bytes)) (share.waiting.shift() as Waiter).admit()
    if (share.held === 0 && share.waiting.length === 0) shares.delete(key)
  }

  function fits (share: Share, bytes: number): boolean {
    return share.held === 0 || share.held + bytes <= maxBytes
  }

  return {
    async hold (key, bytes, gone) {
      if (gone.aborted) return undefined
      if (maxBytes === 0) return () => {}
      let share = shares.get(key)
      if (share === undefined) {
        share = { held: 0, waiting: [] }
        shares.set(key, share)
      }
      // First come, first served: a request never passes one that waits before it.
      if (share.waiting.length === 0 && fits(share, bytes)) return grant(key, share, bytes)
      const mine = share
      return await new Promise((resolve) => {
        const waiter: Waiter = {
          bytes,
          admit: () => {
            gone.removeEventListener('abort', leave)
            resolve(grant(key, mine, bytes))
          }
        }
        const leave = (): void => {
          mine.waiting.splice(mine.waiting.indexOf(waiter), 1)
          admitWaiting(key, mine)
          resolve(undefined)
        }
        gone.addEventListener('abort', leave, { once: true })
        mine.waiting.push(waiter)
      })
    },
    get size () { return shares.size }
  }
}

/**
 * What a request takes: its body's declared length, or, for a body sent without one (`Transfer-Encoding`), the most
 * it may be (`bodyLimit`); a request with neither has no body (RFC 9112 §6.3). Plus the overhead.
 */
export function requestBytes (headers: { 'content-length'?: string, 'transfer-encoding'?: string }, bodyLimit: number): number {
  const declared = Number(headers['content-length'])
  const body = headers['content-length'] !== undefined && Number.isSafeInteger(declared) && declared >= 0
    ? Math.min(declared, bodyLimit)
    : headers['transfer-encoding'] !== undefined ? bodyLimit : 0
  return body + REQUEST_OVERHEAD_BYTES
}
