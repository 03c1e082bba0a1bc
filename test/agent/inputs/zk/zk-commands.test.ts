/** The codes are the protocol's (the notes' command list): a typo here would talk past the device. */
import { describe, expect, it } from 'vitest'
import { ZkCommand, ZkEventFlag, ZkReply, zkCodeName } from '../../../../agent/inputs/zk/zk-commands.js'

describe('ZK codes', () => {
  it('match the notes', () => {
    expect(ZkCommand).toMatchObject({
      CONNECT: 1000,
      EXIT: 1001,
      ENABLEDEVICE: 1002,
      DISABLEDEVICE: 1003,
      AUTH: 1102,
      OPTIONS_RRQ: 11,
      ATTLOG_RRQ: 13,
      CLEAR_ATTLOG: 15,
      GET_FREE_SIZES: 50,
      GET_TIME: 201,
      SET_TIME: 202,
      REG_EVENT: 500,
      PREPARE_DATA: 1500,
      DATA: 1501,
      FREE_DATA: 1502,
      DATA_WRRQ: 1503,
      DATA_RDY: 1504,
    })
    expect(ZkReply).toMatchObject({ ACK_OK: 2000, ACK_ERROR: 2001, ACK_UNAUTH: 2005, ACK_UNKNOWN: 0xffff })
    expect(ZkEventFlag.ATTLOG).toBe(1)
  })

  it('names codes for messages', () => {
    expect(zkCodeName(1503)).toBe('CMD_DATA_WRRQ')
    expect(zkCodeName(2005)).toBe('CMD_ACK_UNAUTH')
    expect(zkCodeName(4242)).toBe('code 4242')
  })
})
