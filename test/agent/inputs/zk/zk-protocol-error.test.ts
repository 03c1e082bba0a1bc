/** The error the ZK library throws carries a stable code, the device's reply code and the cause. */
import { describe, expect, it } from 'vitest'
import { ZkProtocolError } from '../../../../agent/inputs/zk/zk-protocol-error.js'

describe('ZkProtocolError', () => {
  it('keeps its code, reply code and cause', () => {
    const cause = new Error('ECONNRESET')
    const error = new ZkProtocolError('zk_command_failed', 'refused', { cause, replyCode: 2001 })
    expect(error).toBeInstanceOf(Error)
    expect(error.name).toBe('ZkProtocolError')
    expect(error.code).toBe('zk_command_failed')
    expect(error.replyCode).toBe(2001)
    expect(error.cause).toBe(cause)
    expect(new ZkProtocolError('zk_timeout', 'slow').replyCode).toBeUndefined()
  })
})
