/**
 * A throwaway CA, a server certificate for 127.0.0.1/localhost and a client certificate, made with
 * the openssl CLI for the embedded broker's TLS tests. Not a test file itself.
 */
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

export interface TestCertificates {
  caFile: string
  serverCertFile: string
  serverKeyFile: string
  clientCertFile: string
  clientKeyFile: string
}

/** Undefined with a reason when openssl cannot be run. */
export async function opensslSkipReason(): Promise<string | undefined> {
  try {
    await run('openssl', ['version'])
    return undefined
  } catch (err) {
    return `openssl CLI not available (${(err as Error).message}): cannot make TLS test certificates`
  }
}

export async function makeTestCertificates(dir: string): Promise<TestCertificates> {
  const path = (name: string) => join(dir, name)
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']
  await run('openssl', [
    'req',
    '-x509',
    ...key,
    '-keyout',
    path('ca.key'),
    '-out',
    path('ca.crt'),
    '-subj',
    '/CN=hajri-test-ca',
    '-days',
    '2',
  ])
  await writeFile(path('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
  await writeFile(path('client.ext'), 'extendedKeyUsage=clientAuth\n')
  for (const [name, cn] of [
    ['server', 'localhost'],
    ['client', 'gate-1'],
  ] as const) {
    await run('openssl', [
      'req',
      ...key,
      '-keyout',
      path(`${name}.key`),
      '-out',
      path(`${name}.csr`),
      '-subj',
      `/CN=${cn}`,
    ])
    await run('openssl', [
      'x509',
      '-req',
      '-in',
      path(`${name}.csr`),
      '-CA',
      path('ca.crt'),
      '-CAkey',
      path('ca.key'),
      '-CAcreateserial',
      '-out',
      path(`${name}.crt`),
      '-days',
      '2',
      '-extfile',
      path(`${name}.ext`),
    ])
  }
  return {
    caFile: path('ca.crt'),
    serverCertFile: path('server.crt'),
    serverKeyFile: path('server.key'),
    clientCertFile: path('client.crt'),
    clientKeyFile: path('client.key'),
  }
}
