/**
 * The key a server signs with (its agent cards; docs/signing.md) and the JWKS it publishes: the signing key's public
 * half and the public keys of a rotation still published. Parsed once at start with node:crypto, synchronously;
 * an error names what is wrong with the key, never any of its material.
 */
import { createHash, createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto'
import { ConverseError, ERROR_CODES } from '../core/errors.js'

/** The JWS algorithms a signing key may use: ES256/384/512 (P-256/384/521), EdDSA (Ed25519), RS* and PS* (RSA ≥ 2048 bits). */
export const SIGNING_ALGORITHMS = Object.freeze(['ES256', 'ES384', 'ES512', 'EdDSA', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'] as const)
export type SigningAlgorithm = typeof SIGNING_ALGORITHMS[number]

/** A public JWK as published: the key's members, its `kid`, `alg` and `use: "sig"`. */
export interface PublishedJwk {
  kty: string
  kid: string
  alg: string
  use: 'sig'
  [member: string]: unknown
}

export interface SigningKeyOptions {
  /**
   * The private key: PEM text (PKCS#8 `PRIVATE KEY`, SEC1 `EC PRIVATE KEY` or PKCS#1 `RSA PRIVATE KEY`; `\n` written
   * as the two characters is read as a line break, for an environment variable), JWK JSON text, or a JWK object.
   */
  privateKey: string | JsonWebKey
  /** Default: the JWK's own `kid`, else its RFC 7638 thumbprint (SHA-256, base64url). */
  kid?: string
  /** Default: the JWK's own `alg`, else the key's: ES256/384/512 by curve, EdDSA, RS256 for RSA. */
  alg?: string
  /** Public keys published beside the signing one (a rotation's previous or next keys): JWKs, each with its `kid`. */
  publishedKeys?: readonly unknown[]
}

/** A checked signing key: what the doors' `cardSigning` option takes. */
export interface SigningKey {
  readonly kid: string
  readonly alg: SigningAlgorithm
  readonly privateKey: KeyObject
  /** The JWKS to publish: the signing key's public half first, then `publishedKeys`. */
  readonly jwks: { readonly keys: readonly PublishedJwk[] }
}

/** What is wrong with a signing key option; `field` names it (privateKey, kid, alg, publishedKeys). */
export class SigningKeyError extends ConverseError {
  readonly field: 'privateKey' | 'kid' | 'alg' | 'publishedKeys'
  constructor (field: SigningKeyError['field'], problem: string) {
    super(ERROR_CODES.SIGNING_KEY, problem)
    this.field = field
  }
}

const KID = /^[\x21-\x7e]{1,128}$/
const CURVE_ALGORITHMS: Record<string, SigningAlgorithm> = { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' }
const RSA_ALGORITHMS: readonly string[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512']
const KINDS = 'an EC (P-256, P-384, P-521), Ed25519 or RSA key'
const checked = new WeakSet<object>()

/** Checks the key, its kid and algorithm and the published keys; throws a SigningKeyError naming the field. */
export function createSigningKey (options: SigningKeyOptions): SigningKey {
  const { key, jwk } = privateKeyOf(options.privateKey)
  const publicJwk = createPublicKey(key).export({ format: 'jwk' })
  const alg = algorithmOf(key, publicJwk, options.alg ?? jwk?.alg, ['privateKey', 'alg'])
  const kid = options.kid ?? (typeof jwk?.kid === 'string' ? jwk.kid : thumbprint(publicJwk))
  if (typeof kid !== 'string' || !KID.test(kid)) throw new SigningKeyError('kid', 'must be 1 to 128 printable ASCII characters without spaces')
  const keys: PublishedJwk[] = [published(publicJwk, kid, alg)]
  const given = options.publishedKeys ?? []
  if (!Array.isArray(given)) throw new SigningKeyError('publishedKeys', 'must be a list of JWKs (a JWKS\'s "keys")')
  given.forEach((entry: unknown, index) => {
    const where = `key ${index + 1}`
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw new SigningKeyError('publishedKeys', `${where} is not a JWK object`)
    const member = entry as Record<string, unknown>
    if (typeof member.kid !== 'string' || !KID.test(member.kid)) throw new SigningKeyError('publishedKeys', `${where} needs a "kid" (1 to 128 printable characters)`)
    if (member.d !== undefined || member.k !== undefined) throw new SigningKeyError('publishedKeys', `${where} ("${member.kid}") holds private material: publish public keys only`)
    if (keys.some((known) => known.kid === member.kid)) throw new SigningKeyError('publishedKeys', `${where}: kid "${member.kid}" is listed twice (or is the signing key's)`)
    let publicKey: KeyObject
    try {
      publicKey = createPublicKey({ key: member as JsonWebKey, format: 'jwk' })
    } catch {
      throw new SigningKeyError('publishedKeys', `${where} ("${member.kid}") is not a valid public JWK`)
    }
    const own = publicKey.export({ format: 'jwk' })
    keys.push(published(own, member.kid, algorithmOf(publicKey, own, member.alg, ['publishedKeys', 'publishedKeys'], `${where} ("${member.kid}"): `)))
  })
  const signingKey: SigningKey = Object.freeze({ kid, alg, privateKey: key, jwks: Object.freeze({ keys: Object.freeze(keys) }) })
  checked.add(signingKey)
  return signingKey
}

/** Whether `value` came from createSigningKey (the doors take nothing else). */
export function isSigningKey (value: unknown): value is SigningKey {
  return typeof value === 'object' && value !== null && checked.has(value)
}

function privateKeyOf (given: unknown): { key: KeyObject, jwk?: JsonWebKey } {
  let jwk: JsonWebKey | undefined
  if (typeof given === 'string') {
    const text = given.trim()
    if (text.startsWith('{')) {
      try {
        jwk = JSON.parse(text) as JsonWebKey
      } catch {
        throw new SigningKeyError('privateKey', 'starts as JSON but is not a JWK: the JSON does not parse')
      }
    } else if (text.startsWith('-----BEGIN ')) {
      if (/^-----BEGIN [A-Z ]*PUBLIC KEY-----/.test(text)) throw new SigningKeyError('privateKey', 'is a public key: the private key is needed to sign')
      if (/^-----BEGIN ENCRYPTED PRIVATE KEY-----/.test(text)) throw new SigningKeyError('privateKey', 'is encrypted: give the key without a passphrase (keep the file or variable secret instead)')
      try {
        return { key: asymmetric(createPrivateKey(text.replaceAll('\\n', '\n'))) }
      } catch (error) {
        if (error instanceof SigningKeyError) throw error
        throw new SigningKeyError('privateKey', 'is not a readable PEM private key (PKCS#8, SEC1 or PKCS#1)')
      }
    } else {
      throw new SigningKeyError('privateKey', 'must be a PEM private key (-----BEGIN PRIVATE KEY-----) or a JWK (JSON)')
    }
  } else {
    jwk = given as JsonWebKey
  }
  if (jwk === null || typeof jwk !== 'object' || Array.isArray(jwk)) throw new SigningKeyError('privateKey', 'must be a PEM private key or a JWK object')
  if (jwk.kty === 'oct') throw new SigningKeyError('privateKey', `is a shared secret (kty "oct"): a signature others verify needs ${KINDS}`)
  if (jwk.d === undefined) throw new SigningKeyError('privateKey', 'is a public JWK (no "d"): the private key is needed to sign')
  try {
    return { key: asymmetric(createPrivateKey({ key: jwk, format: 'jwk' })), jwk }
  } catch (error) {
    if (error instanceof SigningKeyError) throw error
    throw new SigningKeyError('privateKey', `is not a valid private JWK (${KINDS})`)
  }
}

function asymmetric (key: KeyObject): KeyObject {
  if (!['ec', 'ed25519', 'rsa'].includes(key.asymmetricKeyType as string)) throw new SigningKeyError('privateKey', `must be ${KINDS}, not ${key.asymmetricKeyType as string}`)
  return key
}

/**
 * The algorithm for `key`: the one given when the key can use it, else the key's own. Errors name `fields`: the
 * key's field (a kind of key no algorithm fits) and the algorithm's.
 */
function algorithmOf (
  key: KeyObject, jwk: JsonWebKey, given: unknown, [keyField, algField]: Array<SigningKeyError['field']>, prefix = ''
): SigningAlgorithm {
  const type = key.asymmetricKeyType
  const own: SigningAlgorithm | undefined = type === 'ec' ? CURVE_ALGORITHMS[jwk.crv as string] : type === 'ed25519' ? 'EdDSA' : type === 'rsa' ? 'RS256' : undefined
  if (own === undefined) throw new SigningKeyError(keyField, `${prefix}must be ${KINDS}`)
  if (type === 'rsa' && (key.asymmetricKeyDetails?.modulusLength as number) < 2048) throw new SigningKeyError(keyField, `${prefix}an RSA key must have 2048 bits or more`)
  const allowed = type === 'rsa' ? RSA_ALGORITHMS : [own]
  if (given === undefined) return own
  if (typeof given !== 'string' || !allowed.includes(given)) {
    throw new SigningKeyError(algField, `${prefix}alg ${JSON.stringify(String(given).slice(0, 16))} does not fit this key (${allowed.join(', ')})`)
  }
  return given as SigningAlgorithm
}

/** RFC 7638: SHA-256 over the required members, in lexicographic order, without whitespace. */
export function thumbprint (jwk: JsonWebKey): string {
  const members = jwk.kty === 'EC' ? ['crv', 'kty', 'x', 'y'] : jwk.kty === 'OKP' ? ['crv', 'kty', 'x'] : ['e', 'kty', 'n']
  const canonical = `{${members.map((name) => `"${name}":${JSON.stringify(jwk[name as keyof JsonWebKey])}`).join(',')}}`
  return createHash('sha256').update(canonical).digest('base64url')
}

function published (jwk: JsonWebKey, kid: string, alg: SigningAlgorithm): PublishedJwk {
  return { ...(jwk as Record<string, unknown>), kty: jwk.kty as string, kid, alg, use: 'sig' }
}
