import { ZkReply, zkCodeName } from './zk-commands.js'
import type { ZkPacket } from './zk-packet.js'
import { ZkProtocolError } from './zk-protocol-error.js'

/** The replies by which a device says it will not do a command (ZK protocol reply codes). */
export function isZkRefusal(code: number): boolean {
  return code === ZkReply.ACK_ERROR || code === ZkReply.ACK_UNKNOWN || code === ZkReply.ACK_ERROR_CMD
}

/** The error for a reply other than CMD_ACK_OK: refused, not authenticated, or out of place. */
export function zkRefusal(command: number, reply: ZkPacket): ZkProtocolError {
  if (reply.command === ZkReply.ACK_UNAUTH) {
    return new ZkProtocolError(
      'zk_auth_refused',
      `the device refused ${zkCodeName(command)}: not authenticated`,
      {
        replyCode: reply.command,
      },
    )
  }
  if (reply.command >= ZkReply.ACK_ERROR || reply.command === ZkReply.ACK_UNKNOWN) {
    return new ZkProtocolError(
      'zk_command_failed',
      `the device answered ${zkCodeName(command)} with ${zkCodeName(reply.command)}`,
      { replyCode: reply.command },
    )
  }
  return zkUnexpectedReply(command, reply)
}

export function zkUnexpectedReply(command: number, reply: ZkPacket): ZkProtocolError {
  return new ZkProtocolError(
    'zk_unexpected_reply',
    `the device answered ${zkCodeName(command)} with ${zkCodeName(reply.command)} (${reply.data.length} data bytes)`,
    { replyCode: reply.command },
  )
}
