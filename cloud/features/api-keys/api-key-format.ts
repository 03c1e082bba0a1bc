import {
  API_KEY,
  displayPrefix,
  generateSecret,
  hashSecret,
  isWellFormedSecret,
} from '../../auth/secret-format.js'

/** API keys: `hjk_` + 30 base62 CSPRNG characters + a 6-character checksum (see secret-format.ts). */
export const API_KEY_PREFIX = API_KEY.prefix
export const API_KEY_PATTERN = /^hjk_[0-9A-Za-z]{36}$/

export const generateApiKey = (): string => generateSecret(API_KEY)
export const isWellFormedApiKey = (key: string): boolean => isWellFormedSecret(API_KEY, key)
export const hashApiKey = hashSecret
export const apiKeyDisplayPrefix = (key: string): string => displayPrefix(API_KEY, key)
