import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

/**
 * Encryption at rest for the few secrets the cloud must be able to read back: webhook signing
 * secrets, which sign every delivery (a hash would not do). AES-256-GCM with a random 96-bit nonce
 * per secret and the row it belongs to as associated data, so a sealed value copied onto another
 * row does not open. Format: `v1.<nonce>.<ciphertext+tag>`, base64url.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the secret key must be 32 bytes (AES-256)')
  }

  seal(plaintext: string, context: string): string {
    const nonce = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce)
    cipher.setAAD(Buffer.from(context))
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()])
    return `v1.${nonce.toString('base64url')}.${body.toString('base64url')}`
  }

  open(sealed: string, context: string): string {
    const [version, nonce, body] = sealed.split('.')
    if (version !== 'v1' || !nonce || !body) throw new Error('not a sealed secret')
    const bytes = Buffer.from(body, 'base64url')
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(nonce, 'base64url'))
    decipher.setAAD(Buffer.from(context))
    decipher.setAuthTag(bytes.subarray(bytes.length - 16))
    return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString(
      'utf8',
    )
  }
}
