/** src/gateway/caller-share.ts: bytes in flight per caller, first come first served, a waiter that leaves. */
import t from 'tap'
import { callerShare, REQUEST_OVERHEAD_BYTES, requestBytes } from '../../src/gateway/caller-share.js'

const never = new AbortController().signal
const settled = async (promise: Promise<unknown>): Promise<boolean> => {
  let done = false
  promise.then(() => { done = true }, () => { done = true })
  await new Promise((resolve) => setImmediate(resolve))
  return done
}

t.test('within the share requests go at once; past it they wait for bytes to come back, in order', async (t) => {
  const share = callerShare(100)
  const first = await share.hold('a', 60, never) as () => void
  const second = share.hold('a', 60, never)
  const third = share.hold('a', 10, never)
  t.notOk(await settled(second), 'the second waits: 120 > 100')
  t.notOk(await settled(third), 'a small one does not pass the one waiting before it')
  const other = await share.hold('b', 100, never)
  t.type(other, 'function', 'another caller is not held up')
  first()
  first()
  const releaseSecond = await second as () => void
  const releaseThird = await third as () => void
  t.type(releaseThird, 'function', 'both fit once the first gave its bytes back (60 + 10)')
  releaseSecond()
  releaseThird()
  ;(other as () => void)()
  t.equal(share.size, 0, 'nothing is kept for callers with nothing in flight')
})

t.test('a request bigger than the share goes when its caller has nothing in flight', async (t) => {
  const share = callerShare(100)
  const big = await share.hold('a', 500, never) as () => void
  const next = share.hold('a', 1, never)
  t.notOk(await settled(next))
  big()
  ;(await next as () => void)()
  t.equal(share.size, 0)
})

t.test('a waiter whose client left leaves the queue; the ones after it move up', async (t) => {
  const share = callerShare(100)
  const first = await share.hold('a', 80, never) as () => void
  const leaving = new AbortController()
  const gone = share.hold('a', 50, leaving.signal)
  const after = share.hold('a', 20, never)
  leaving.abort()
  t.equal(await gone, undefined, 'resolved with nothing held')
  ;(await after as () => void)()
  first()
  t.equal(share.size, 0)
  const already = new AbortController()
  already.abort()
  t.equal(await share.hold('a', 1, already.signal), undefined, 'a client gone before it asked holds nothing')
})

t.test('0: no limit', async (t) => {
  const share = callerShare(0)
  for (let index = 0; index < 3; index++) t.type(await share.hold('a', 1_000_000, never), 'function')
  t.equal(share.size, 0)
})

t.test('requestBytes: the declared length up to the body limit; a chunked body the limit; no body nothing; plus the overhead', async (t) => {
  t.equal(requestBytes({ 'content-length': '10' }, 1000), 10 + REQUEST_OVERHEAD_BYTES)
  t.equal(requestBytes({ 'content-length': '5000' }, 1000), 1000 + REQUEST_OVERHEAD_BYTES)
  t.equal(requestBytes({ 'transfer-encoding': 'chunked' }, 1000), 1000 + REQUEST_OVERHEAD_BYTES, 'chunked: the most it may be')
  t.equal(requestBytes({ 'content-length': 'abc', 'transfer-encoding': 'chunked' }, 1000), 1000 + REQUEST_OVERHEAD_BYTES)
  t.equal(requestBytes({ 'content-length': '-1' }, 1000), REQUEST_OVERHEAD_BYTES)
  t.equal(requestBytes({}, 1000), REQUEST_OVERHEAD_BYTES, 'a GET: no body')
})
