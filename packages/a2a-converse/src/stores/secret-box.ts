/**
 * Secrets at rest: a value a store keeps for a caller that is a credential (a push config's token and
 * authentication) is sealed with AES-256-GCM under an operator's key before it is written, so the database's files,
 * its WAL and its dumps hold ciphertext only.
 *
 * A sealed value is `sb1.<key id>.<iv>.<ciphertext and tag>` (base64url; a random 96-bit IV per value; the key id is
 * derived from the key, so it names the key without revealing it). Values are sealed with the current key and opened
 * with whichever key their id names: the previous keys are kept for reading while a rotation re-seals the rows. A
 * value that is not sealed (written in clear before sealing existed) is read as it is.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto'
import { ConverseError, ERROR_CODES } from '../core/errors.js'

const PREFIX = 'sb1'
const KEY_BYTES = 32
const IV_BYTES = 12
const TAG_BYTES = 16

/** A key that is not 32 bytes in base64 or hex; the message says which form is wanted, never the value. */
export class SecretsKeyError extends ConverseError {
  constructor (problem: string) {
    super(ERROR_CODES.SECRETS_KEY, problem)
  }
}

/** A stored value that cannot be opened: sealed under a key not given, or altered. */
export class SealedValueError extends ConverseError {
  constructor (problem: string) {
    super(ERROR_CODES.SEALED_VALUE, problem)
  }
}

/** A 32-byte key from its text: 64 hex digits, or base64 (standard or url-safe, padded or not). */
export function parseSecretsKey (text: string): Buffer {
  const trimmed = text.trim()
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed) ? Buffer.from(trimmed, 'base64') : undefined
  if (key?.length !== KEY_BYTES) throw new SecretsKeyError('must be 32 bytes, as 64 hex digits or 44 base64 characters (openssl rand -base64 32)')
  return key
}

/** A new random key in the text form parseSecretsKey reads (base64). */
export function generateSecretsKey (): string {
  return randomBytes(KEY_BYTES).toString('base64')
}

/** The key's id: not the key, and not enough to find it (an HMAC of a fixed label under the key). */
function keyIdOf (key: Buffer): string {
  return createHmac('sha256', key).update('a2a-converse secrets key id').digest('base64url').slice(0, 11)
}

export class SecretBox {
  /** The id of the key new values are sealed with. */
  readonly keyId: string
  readonly #current: Buffer
  readonly #keys = new Map<string, Buffer>()

  /** `key` seals and opens; each of `previous` only opens (a rotation's old keys). */
  constructor (key: Buffer, previous: readonly Buffer[] = []) {
    for (const each of [key, ...previous]) {
      if (each.length !== KEY_BYTES) throw new SecretsKeyError('must be 32 bytes')
      if (!this.#keys.has(keyIdOf(each))) this.#keys.set(keyIdOf(each), each)
    }
    this.#current = key
    this.keyId = keyIdOf(key)
  }

  seal (plain: string): string {
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.#current, iv)
    // The prefix and key id are authenticated too: a value cannot be relabelled to another key.
    cipher.setAAD(Buffer.from(`${PREFIX}.${this.keyId}`))
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()])
    return `${PREFIX}.${this.keyId}.${iv.toString('base64url')}.${sealed.toString('base64url')}`
  }

  /** The value in clear: a sealed one opened with the key its id names, any other as it is (written before sealing). */
  open (stored: string): string {
    if (!isSealed(stored)) return stored
    const [, keyId, iv, sealed] = stored.split('.')
    const key = this.#keys.get(keyId)
    if (key === undefined) throw new SealedValueError(`a value is sealed with key id ${keyId}, which is neither the current key nor a previous one given`)
    const bytes = Buffer.from(sealed, 'base64url')
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
      decipher.setAAD(Buffer.from(`${PREFIX}.${keyId}`))
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8')
    } catch {
      throw new SealedValueError(`a value sealed with key id ${keyId} fails authentication (altered or truncated)`)
    }
  }

  /** Whether the stored value is sealed with the current key (else a rotation re-seals it). */
  isCurrent (stored: string): boolean {
    return stored.startsWith(currentPrefix(this))
  }
}

/** Whether a stored value is sealed (any key). */
export function isSealed (stored: string): boolean {
  return /^sb1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(stored)
}

/** The prefix every value sealed with the box's current key starts with. */
export function currentPrefix (box: SecretBox): string {
  return `${PREFIX}.${box.keyId}.`
}

/** Sealed with the box; without one (a store given no key), in clear. */
export function sealWith (box: SecretBox | undefined, plain: string): string {
  return box === undefined ? plain : box.seal(plain)
}

/** Opened with the box; a value in clear as it is; a sealed one without a box is refused (no key was given). */
export function openWith (box: SecretBox | undefined, stored: string): string {
  if (box !== undefined) return box.open(stored)
  if (isSealed(stored)) throw new SealedValueError('a value is sealed, but this store was given no key to open it')
  return stored
}
