/**
 * ZK protocol command codes: the `cmd` field of a packet the client sends (ZK protocol: command
 * table). CLEAR_ATTLOG is here so that it has a name, and is sent only by the client method named
 * for it.
 */
export const ZkCommand = {
  CONNECT: 1000,
  EXIT: 1001,
  ENABLEDEVICE: 1002,
  DISABLEDEVICE: 1003,
  REFRESHDATA: 1013,
  GET_VERSION: 1100,
  AUTH: 1102,
  OPTIONS_RRQ: 11,
  OPTIONS_WRQ: 12,
  ATTLOG_RRQ: 13,
  CLEAR_ATTLOG: 15,
  GET_FREE_SIZES: 50,
  GET_TIME: 201,
  SET_TIME: 202,
  /** Sent by the client to register for events; sent by the device as each event's `cmd`. */
  REG_EVENT: 500,
  PREPARE_DATA: 1500,
  DATA: 1501,
  FREE_DATA: 1502,
  /** Asks for a dataset, sent whole or announced for reading by chunks ("prepare buffer"). */
  DATA_WRRQ: 1503,
  /** Asks for one chunk `<start u32, size u32>` of the prepared dataset ("read buffer"). */
  DATA_RDY: 1504,
} as const

/** ZK protocol reply codes: the `cmd` field of a device's answer. */
export const ZkReply = {
  ACK_OK: 2000,
  ACK_ERROR: 2001,
  ACK_DATA: 2002,
  ACK_RETRY: 2003,
  ACK_REPEAT: 2004,
  ACK_UNAUTH: 2005,
  ACK_ERROR_DATA: 0xfffb,
  ACK_ERROR_INIT: 0xfffc,
  ACK_ERROR_CMD: 0xfffd,
  ACK_UNKNOWN: 0xffff,
} as const

/**
 * ZK protocol event codes: the flags of CMD_REG_EVENT, and the `session` field of an event packet
 * (which carries one of them).
 */
export const ZkEventFlag = {
  ATTLOG: 1,
  FINGER: 2,
  ENROLLUSER: 4,
  ENROLLFINGER: 8,
  BUTTON: 16,
  UNLOCK: 32,
  VERIFY: 128,
  FPFTR: 256,
  ALARM: 512,
} as const

/** The name of a command or reply code, for messages and logs. */
export function zkCodeName(code: number): string {
  for (const [name, value] of Object.entries(ZkCommand)) if (value === code) return `CMD_${name}`
  for (const [name, value] of Object.entries(ZkReply)) if (value === code) return `CMD_${name}`
  return `code ${code}`
}
