/**
 * Why a ZK 4370 exchange failed. The codes are stable: the input reports them in the device status
 * and chooses from them whether to retry (docs/development/architecture.md, "Agent layers").
 */
export type ZkErrorCode =
  /** A packet's checksum did not match its bytes (RFC 1071 over the payload). */
  | 'zk_bad_checksum'
  /** A TCP frame did not start with `50 50 82 7D`: the stream is out of step. */
  | 'zk_bad_magic'
  /** A packet was longer than the bound, so it was not read into memory. */
  | 'zk_packet_too_large'
  /** A packet was shorter than its 8-byte header. */
  | 'zk_packet_too_short'
  /** The device did not answer within the request's timeout. */
  | 'zk_timeout'
  /** The device would not take the comm key (CMD_ACK_UNAUTH after CMD_AUTH). */
  | 'zk_auth_refused'
  /** The device would not open a session (CMD_CONNECT refused, or the connection closed at once). */
  | 'zk_session_refused'
  /** The TCP connection could not be opened, or the UDP socket not bound. */
  | 'zk_unreachable'
  /** The connection closed or broke while the client was using it. */
  | 'zk_connection_closed'
  /** The device answered a command with an error code (CMD_ACK_ERROR, CMD_ACK_UNKNOWN...). */
  | 'zk_command_failed'
  /** The device answered with a packet that does not fit the exchange. */
  | 'zk_unexpected_reply'
  /** A dataset announced or sent is larger than the bound. */
  | 'zk_dataset_too_large'
  /** A dataset's sizes do not add up, or its records cannot be read. */
  | 'zk_bad_dataset'
  /** A device time outside 2000–2099 or not a calendar date. */
  | 'zk_bad_time'
  /** A real-time event payload of a size or content the protocol does not define. */
  | 'zk_bad_event'

/** A failed ZK 4370 exchange or an unreadable packet, with a stable code. */
export class ZkProtocolError extends Error {
  constructor(
    readonly code: ZkErrorCode,
    message: string,
    options?: { cause?: unknown; replyCode?: number },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'ZkProtocolError'
    this.replyCode = options?.replyCode
  }

  /** The device's reply code when it refused a command. */
  readonly replyCode: number | undefined
}
