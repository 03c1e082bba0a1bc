import { describe, expect, it } from 'vitest'
import { ZkTcpFramer } from '../../../../agent/simulator/zk-device/zk-tcp-framer.js'

const frame = (payload: string) =>
  Buffer.from(`5050827d${(payload.length / 2).toString(16).padStart(2, '0')}000000${payload}`, 'hex')

describe('ZkTcpFramer', () => {
  it('cuts frames delivered byte by byte or several at once', () => {
    const framer = new ZkTcpFramer()
    const stream = Buffer.concat([frame('e80317fc00000000'), frame('0b00b9e6f38d0c007e506c6174666f726d00')])
    const out: string[] = []
    for (const byte of stream) for (const p of framer.push(Buffer.from([byte]))) out.push(p.toString('hex'))
    for (const p of framer.push(Buffer.concat([stream, stream]))) out.push(p.toString('hex'))
    expect(out).toEqual(Array(3).fill(['e80317fc00000000', '0b00b9e6f38d0c007e506c6174666f726d00']).flat())
  })

  it('throws on a stream that is not ZK framing', () => {
    expect(() => new ZkTcpFramer().push(Buffer.from('474554202f20485454502f312e310d0a', 'hex'))).toThrow(
      'prefix',
    )
    expect(() => new ZkTcpFramer().push(Buffer.from('5050827dffffffff', 'hex'))).toThrow('bytes')
  })
})
