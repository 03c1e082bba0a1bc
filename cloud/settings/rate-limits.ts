/** Requests a minute one admin token may make (HAJRI_CONSOLE_RATE_LIMIT): far above what a person or a script needs. */
export const DEFAULT_CONSOLE_RATE_LIMIT = 600

/**
 * The OAuth endpoints check client secrets, so they are limited against guessing: per address
 * (HAJRI_OAUTH_RATE_LIMIT_PER_IP) and per client id (HAJRI_OAUTH_RATE_LIMIT_PER_CLIENT). A site
 * agent needs one token an hour; an HR backend, a few.
 */
export const DEFAULT_OAUTH_RATE_LIMIT_PER_IP = 300
export const DEFAULT_OAUTH_RATE_LIMIT_PER_CLIENT = 60
