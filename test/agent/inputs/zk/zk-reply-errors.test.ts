/** How a reply other than CMD_ACK_OK becomes an error: refused, not authenticated, or out of place. */
import { describe, expect, it } from 'vitest'
import type { ZkPacket } from '../../../../agent/inputs/zk/zk-packet.js'
import { isZkRefusal, zkRefusal, zkUnexpectedReply } from '../../../../agent/inputs/zk/zk-reply-errors.js'

const reply = (command: number): ZkPacket => ({
  command,
  sessionId: 1,
  replyNumber: 2,
  data: Buffer.alloc(0),
})

describe('ZK reply errors', () => {
  it('tells refusals from other replies', () => {
    expect([2001, 0xffff, 0xfffd].every(isZkRefusal)).toBe(true)
    expect([2000, 2005, 1501].some(isZkRefusal)).toBe(false)
  })

  it('maps each reply to a stable code', () => {
    expect(zkRefusal(202, reply(2005))).toMatchObject({ code: 'zk_auth_refused', replyCode: 2005 })
    expect(zkRefusal(202, reply(2001))).toMatchObject({ code: 'zk_command_failed', replyCode: 2001 })
    expect(zkRefusal(202, reply(0xffff))).toMatchObject({ code: 'zk_command_failed' })
    expect(zkRefusal(202, reply(1501))).toMatchObject({ code: 'zk_unexpected_reply', replyCode: 1501 })
    expect(zkUnexpectedReply(1503, reply(1500)).message).toContain('CMD_DATA_WRRQ')
  })
})
