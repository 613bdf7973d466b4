/** The secret box (packages/a2a-converse/src/stores/secret-box.ts): AES-256-GCM per value, a key id naming the key, old keys read, clear text passed. */
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { generateSecretsKey, isSealed, openWith, parseSecretsKey, SealedValueError, sealWith, SecretBox, SecretsKeyError } from '../../../packages/a2a-converse/src/stores/secret-box.js'

t.test('keys: 32 bytes as hex or base64; anything else refused without the value', async (t) => {
  const key = randomBytes(32)
  t.same(parseSecretsKey(key.toString('hex')), key)
  t.same(parseSecretsKey(key.toString('base64')), key)
  t.same(parseSecretsKey(` ${key.toString('base64url')}\n`), key, 'url-safe, unpadded, trimmed')
  t.equal(parseSecretsKey(generateSecretsKey()).length, 32)
  for (const bad of ['', 'short', randomBytes(16).toString('hex'), randomBytes(31).toString('base64'), 'g'.repeat(64)]) {
    t.throws(() => parseSecretsKey(bad), new SecretsKeyError('must be 32 bytes, as 64 hex digits or 44 base64 characters (openssl rand -base64 32)'))
  }
  t.throws(() => new SecretBox(randomBytes(16)), SecretsKeyError)
})

t.test('sealed: a random IV per value, the key id, nothing of the plain text; opened with the key its id names', async (t) => {
  const [oldKey, newKey] = [randomBytes(32), randomBytes(32)]
  const old = new SecretBox(oldKey)
  const box = new SecretBox(newKey, [oldKey, oldKey])
  const plain = '{"token":"tok-é"}'
  const a = box.seal(plain)
  const b = box.seal(plain)
  t.not(a, b, 'a random IV per value')
  t.ok(isSealed(a) && a.startsWith(`sb1.${box.keyId}.`) && !a.includes('tok'))
  t.equal(box.open(a), plain)
  t.ok(box.isCurrent(a))
  const fromOld = old.seal(plain)
  t.notOk(box.isCurrent(fromOld))
  t.equal(box.open(fromOld), plain, 'a previous key still opens')
  t.equal(box.open(plain), plain, 'a value in clear (written before sealing) as it is')
  t.throws(() => old.open(a), new SealedValueError(`a value is sealed with key id ${box.keyId}, which is neither the current key nor a previous one given`))
  const parts = a.split('.')
  const flipped = Buffer.from(parts[3], 'base64url')
  flipped[0] ^= 1
  t.throws(() => box.open([...parts.slice(0, 3), flipped.toString('base64url')].join('.')), /fails authentication/)
  t.throws(() => box.open(['sb1', old.keyId, parts[2], parts[3]].join('.')), /fails authentication/, 'relabelled to another key')
})

t.test('without a box: written in clear; a sealed value is refused, not misread', async (t) => {
  const box = new SecretBox(randomBytes(32))
  t.equal(sealWith(undefined, 'x'), 'x')
  t.equal(openWith(undefined, 'x'), 'x')
  t.equal(openWith(box, sealWith(box, 'x')), 'x')
  t.throws(() => openWith(undefined, box.seal('x')), new SealedValueError('a value is sealed, but this store was given no key to open it'))
})
