/** Optional peers: a missing one is named in one line with what to install; any other failure is left as it is. */
import t from 'tap'
import { importPeer, MISSING_PEER, MissingPeerError, requirePeers } from '../../../packages/a2a-converse/src/peers/import-peer.js'

t.test('a missing package: MissingPeerError, one line naming the entry and the install command', async (t) => {
  const error = await importPeer('a2a-converse-no-such-peer', 'a2a-converse/example').catch((error: unknown) => error)
  t.ok(error instanceof MissingPeerError)
  t.equal((error as MissingPeerError).code, MISSING_PEER)
  t.equal((error as Error).message, 'a2a-converse/example needs a2a-converse-no-such-peer: npm install a2a-converse-no-such-peer')
  t.notMatch((error as Error).message, /\n/)
  t.same((error as MissingPeerError).packages, ['a2a-converse-no-such-peer'])
  const scoped = await importPeer('@a2a-converse-none/peer/sub', 'a2a-converse/example').catch((error: unknown) => error)
  t.match((scoped as Error).message, 'needs @a2a-converse-none/peer: npm install @a2a-converse-none/peer', 'a scoped subpath names its package')
})

t.test('the packages named are the entry\'s peers, all of them', async (t) => {
  const error = await importPeer('@a2a-converse-none/grpc', 'a2a-converse/grpc', ['@a2a-converse-none/grpc', 'other']).catch((error: unknown) => error)
  t.equal((error as Error).message, 'a2a-converse/grpc needs @a2a-converse-none/grpc and other: npm install @a2a-converse-none/grpc other')
})

t.test('a peer that is there but fails otherwise is not called missing', async (t) => {
  const notExported = await importPeer('ajv/no-such-subpath', 'a2a-converse/example').catch((error: unknown) => error)
  t.notOk(notExported instanceof MissingPeerError)
  t.match((notExported as Error).message, /no-such-subpath/)
  // Not found, but not one of the packages named: something else is missing (a dependency of the peer).
  const elsewhere = await importPeer('a2a-converse-no-such-peer', 'a2a-converse/example', ['pg']).catch((error: unknown) => error)
  t.notOk(elsewhere instanceof MissingPeerError)
  t.match((elsewhere as Error).message, "Cannot find package 'a2a-converse-no-such-peer'")
})

t.test('a peer that is there loads', async (t) => {
  const ajv = await importPeer<typeof import('ajv')>('ajv', 'a2a-converse/example')
  t.type(ajv.default, 'function')
})

t.test('requirePeers names every missing one, and passes when all are there', async (t) => {
  t.throws(() => requirePeers('a2a-converse/express', ['ajv', 'a2a-converse-no-such-peer', 'a2a-converse-none-2']),
    { name: 'MissingPeerError', message: 'a2a-converse/express needs a2a-converse-no-such-peer and a2a-converse-none-2: npm install a2a-converse-no-such-peer a2a-converse-none-2' })
  t.doesNotThrow(() => requirePeers('a2a-converse/express', ['ajv', 'express']))
})
