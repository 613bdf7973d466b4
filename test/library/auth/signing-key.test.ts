/**
 * createSigningKey: PEM and JWK keys of each kind, the kid (given, the JWK's, the RFC 7638 thumbprint), the algorithm
 * (given, the JWK's, the key's own), the published keys of a rotation, and every refusal naming its field without
 * a byte of the key. createCardSigner: one signature per card body and jku, the cache bounded.
 */
import t from 'tap'
import { generateKeyPairSync, generateKeySync } from 'node:crypto'
import { calculateJwkThumbprint, type JWK } from 'jose'
import { createSigningKey, SigningKeyError, type SigningKeyOptions } from 'a2a-converse/service'
import { createCardSigner } from '../../../packages/a2a-converse/src/auth/card-signer.js'
import { isSigningKey } from '../../../packages/a2a-converse/src/auth/signing-key.js'
import { privateKey, privatePem, protectedHeader } from '../../fixtures/card-signing.js'

function refusal (options: SigningKeyOptions): { field: string, message: string } {
  try {
    createSigningKey(options)
  } catch (error) {
    t.ok(error instanceof SigningKeyError)
    return { field: (error as SigningKeyError).field, message: (error as SigningKeyError).message }
  }
  throw new Error('not refused')
}

t.test('PEM keys of each kind: the algorithm from the key, the kid its thumbprint, the JWKS its public half', async (t) => {
  for (const [kind, kty] of [['ES256', 'EC'], ['ES384', 'EC'], ['EdDSA', 'OKP'], ['RS256', 'RSA']] as const) {
    const pem = privatePem(kind)
    const key = createSigningKey({ privateKey: pem })
    t.equal(key.alg, kind)
    t.ok(isSigningKey(key))
    const [published] = key.jwks.keys
    t.equal(published.kty, kty)
    t.equal(published.d, undefined, `${kind}: no private member published`)
    t.equal(key.kid, await calculateJwkThumbprint(published as JWK), `${kind}: kid = RFC 7638 thumbprint`)
    t.match(published, { kid: key.kid, alg: kind, use: 'sig' })
  }
  // A PEM with its line breaks written as \n (an environment variable on one line).
  const oneLine = privatePem('ES256').trim().replaceAll('\n', '\\n')
  t.equal(createSigningKey({ privateKey: oneLine }).alg, 'ES256')
  // SEC1 and PKCS#1 PEM too.
  t.equal(createSigningKey({ privateKey: privateKey('ES256').export({ format: 'pem', type: 'sec1' }) as string }).alg, 'ES256')
  t.equal(createSigningKey({ privateKey: privateKey('RS256').export({ format: 'pem', type: 'pkcs1' }) as string, alg: 'PS256' }).alg, 'PS256')
  t.notOk(isSigningKey({ kid: 'x' }))
  t.notOk(isSigningKey(null))
})

t.test('JWK keys: text or object, their own kid and alg unless given', async (t) => {
  const jwk = privateKey('EdDSA').export({ format: 'jwk' })
  t.equal(createSigningKey({ privateKey: JSON.stringify({ ...jwk, kid: 'own' }) }).kid, 'own')
  t.equal(createSigningKey({ privateKey: { ...jwk, kid: 'own' }, kid: 'given' }).kid, 'given')
  const rsa = privateKey('RS256').export({ format: 'jwk' })
  t.equal(createSigningKey({ privateKey: { ...rsa, alg: 'RS512' } }).alg, 'RS512', 'the JWK\'s alg')
  t.equal(createSigningKey({ privateKey: { ...rsa, alg: 'RS512' }, alg: 'PS384' }).alg, 'PS384', 'the given alg wins')
})

t.test('published keys: public JWKs with their kid, after the signing key', async (t) => {
  const old = privateKey('ES256')
  const oldJwk = { ...old.export({ format: 'jwk' }), kid: 'old' }
  const { d: _d, ...oldPublic } = oldJwk
  const edPublic = { ...generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }), kid: 'next', alg: 'EdDSA' }
  const rsa = privatePem('RS256')
  const key = createSigningKey({ privateKey: rsa, kid: 'now', publishedKeys: [oldPublic, edPublic] })
  t.strictSame(key.jwks.keys.map((entry) => [entry.kid, entry.alg]), [['now', 'RS256'], ['old', 'ES256'], ['next', 'EdDSA']])
  const cases: Array<[unknown, RegExp]> = [
    ['nope', /must be a list of JWKs/],
    [[42], /key 1 is not a JWK object/],
    [[null], /key 1 is not a JWK object/],
    [[[]], /key 1 is not a JWK object/],
    [[{ ...oldPublic, kid: undefined }], /key 1 needs a "kid"/],
    [[{ ...oldPublic, kid: 'has space' }], /key 1 needs a "kid"/],
    [[oldJwk], /key 1 \("old"\) holds private material/],
    [[{ kty: 'oct', k: 'c2VjcmV0', kid: 'shared' }], /holds private material/],
    [[oldPublic, { ...edPublic, kid: 'old' }], /key 2: kid "old" is listed twice/],
    [[{ ...oldPublic, kid: 'now' }], /kid "now" is listed twice \(or is the signing key's\)/],
    [[{ kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA', kid: 'broken' }], /key 1 \("broken"\) is not a valid public JWK/],
    [[{ ...generateKeyPairSync('x25519').publicKey.export({ format: 'jwk' }), kid: 'dh' }], /key 1 \("dh"\): must be an EC/],
    [[{ ...oldPublic, alg: 'RS256' }], /key 1 \("old"\): alg "RS256" does not fit this key \(ES256\)/],
    [[{ ...generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' }), kid: 'short' }], /2048 bits or more/]
  ]
  for (const [publishedKeys, message] of cases) {
    const { field, message: got } = refusal({ privateKey: rsa, kid: 'now', publishedKeys: publishedKeys as unknown[] })
    t.equal(field, 'publishedKeys')
    t.match(got, message)
  }
})

t.test('refusals name the field and never the key', async (t) => {
  const pem = privatePem('ES256')
  const publicPem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'pem', type: 'spki' }) as string
  const encrypted = privateKey('ES256').export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'secret' }) as string
  const ecJwk = privateKey('ES256').export({ format: 'jwk' })
  const cases: Array<[SigningKeyOptions, string, RegExp]> = [
    [{ privateKey: 'not a key at all' }, 'privateKey', /must be a PEM private key .* or a JWK/],
    [{ privateKey: '{"kty": ' }, 'privateKey', /starts as JSON but is not a JWK/],
    [{ privateKey: publicPem }, 'privateKey', /is a public key/],
    [{ privateKey: encrypted }, 'privateKey', /is encrypted/],
    [{ privateKey: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----' }, 'privateKey', /not a readable PEM private key/],
    [{ privateKey: generateKeyPairSync('x25519').privateKey.export({ format: 'pem', type: 'pkcs8' }) as string }, 'privateKey', /must be an EC .*, not x25519/],
    [{ privateKey: 42 as unknown as string }, 'privateKey', /must be a PEM private key or a JWK object/],
    [{ privateKey: 'null' as unknown as string }, 'privateKey', /must be a PEM private key/],
    [{ privateKey: { kty: 'oct', k: generateKeySync('hmac', { length: 256 }).export().toString('base64url') } }, 'privateKey', /shared secret/],
    [{ privateKey: { ...ecJwk, d: undefined } }, 'privateKey', /is a public JWK/],
    [{ privateKey: { ...ecJwk, x: 'AAAA' } }, 'privateKey', /not a valid private JWK/],
    [{ privateKey: generateKeyPairSync('ed448').privateKey.export({ format: 'jwk' }) }, 'privateKey', /must be an EC .*, not ed448/],
    [{ privateKey: generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string }, 'privateKey', /must be an EC \(P-256/],
    [{ privateKey: generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string }, 'privateKey', /2048 bits or more/],
    [{ privateKey: pem, alg: 'RS256' }, 'alg', /alg "RS256" does not fit this key \(ES256\)/],
    [{ privateKey: pem, alg: 7 as unknown as string }, 'alg', /alg "7" does not fit/],
    [{ privateKey: privatePem('RS256'), alg: 'ES256' }, 'alg', /\(RS256, RS384, RS512, PS256, PS384, PS512\)/],
    [{ privateKey: pem, kid: '' }, 'kid', /1 to 128 printable/],
    [{ privateKey: pem, kid: 'k'.repeat(129) }, 'kid', /1 to 128 printable/]
  ]
  for (const [options, field, message] of cases) {
    const got = refusal(options)
    t.equal(got.field, field, String(message))
    t.match(got.message, message)
    t.notMatch(got.message, /AAAA|MII[A-Za-z0-9]|-----END/, 'no key material in the message')
  }
})

t.test('the card signer: one signature per card and jku, a new one when either changes, the cache bounded', async (t) => {
  const signer = createCardSigner(createSigningKey({ privateKey: privatePem('ES256'), kid: 'k1' }))
  const card = { name: 'A', description: 'd', version: '1', signatures: [{ protected: 'old', signature: 'old' }] }
  const first = await signer.sign(card, 'https://a.example/.well-known/jwks.json')
  t.equal((first.signatures as unknown[]).length, 1, 'a signature the card carried is dropped')
  t.strictSame(protectedHeader(first as never), { alg: 'ES256', kid: 'k1', typ: 'JOSE', jku: 'https://a.example/.well-known/jwks.json' })
  // ECDSA signatures differ each time: the same signature again is the cache.
  t.strictSame(await signer.sign(card, 'https://a.example/.well-known/jwks.json'), first)
  t.notSame(await signer.sign({ ...card, name: 'B' }, 'https://a.example/.well-known/jwks.json'), first)
  const elsewhere = await signer.sign(card, 'https://b.example/.well-known/jwks.json')
  t.equal(protectedHeader(elsewhere as never).jku, 'https://b.example/.well-known/jwks.json')
  // Past 256 cards (and jkus) the least recently served goes: the first card is signed afresh.
  for (let index = 0; index < 300; index++) await signer.sign({ ...card, name: `n${index}` }, `https://h${index}.example/.well-known/jwks.json`)
  t.notSame(await signer.sign(card, 'https://a.example/.well-known/jwks.json'), first)
})
