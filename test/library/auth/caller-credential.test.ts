/**
 * Which scheme accepted a caller (auth/caller-credential.ts), as the authenticator records it beside the Caller: an
 * API key (never kept), or a JWT, whose token is kept for the upstream identity modes that forward it.
 */
import t from 'tap'
import { decodeJwt } from 'jose'
import { createAuthenticator } from 'a2a-converse/service'
import { callerBearerToken, callerScheme, keepBearerToken } from '../../../packages/a2a-converse/src/auth/caller-credential.js'
import { AUDIENCE, identityProvider, ISSUER } from '../../fixtures/auth.js'

t.test('an API key caller: scheme api-key, no token; a JWT caller: scheme jwt and its token; a walk-in: neither', async (t) => {
  const provider = await identityProvider(t)
  const authenticator = createAuthenticator({
    apiKeys: [{ callerId: 'carol', key: 'carol-key-0123456789' }],
    jwt: { jwksUrl: provider.jwksUrl, issuer: ISSUER, audience: AUDIENCE }
  })
  const keyed = await authenticator.authenticate({ authorization: 'Bearer carol-key-0123456789' })
  t.strictSame(keyed, { id: 'carol' }, 'nothing of the credential on the caller itself')
  t.equal(callerScheme(keyed), 'api-key')
  t.equal(callerBearerToken(keyed), undefined, 'an API key is never kept')
  const token = await provider.token('alice')
  const bearer = await authenticator.authenticate({ authorization: `Bearer ${token}` })
  t.strictSame(bearer, { id: 'alice' })
  t.equal(callerScheme(bearer), 'jwt')
  t.equal(callerBearerToken(bearer), token)
  const kept = { id: 'alice' }
  t.equal(keepBearerToken(bearer!, kept), decodeJwt(token).exp! * 1000, 'copied with its exp, in ms')
  t.equal(callerBearerToken(kept), token)
  t.equal(keepBearerToken(keyed!, kept), undefined, 'an API key caller has nothing to copy')
  t.equal(callerBearerToken(kept), token, 'and what was kept stays')
  t.equal(callerScheme(undefined), undefined, 'a walk-in')
  t.equal(callerBearerToken(undefined), undefined)
  t.equal(callerScheme({ id: 'made-elsewhere' }), undefined, 'a caller another authenticator made')
})
