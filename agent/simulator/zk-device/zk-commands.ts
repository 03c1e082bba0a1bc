/**
 * Command and reply codes of the ZK binary protocol on port 4370 (docs: the research notes,
 * "ZK binary protocol, port 4370"; zk-protocol `protocol.md`, "Command/Reply Identifiers").
 */
export const ZK_CMD = {
  CMD_USERTEMP_RRQ: 9,
  CMD_OPTIONS_RRQ: 11,
  CMD_OPTIONS_WRQ: 12,
  CMD_ATTLOG_RRQ: 13,
  CMD_CLEAR_DATA: 14,
  CMD_CLEAR_ATTLOG: 15,
  CMD_GET_FREE_SIZES: 50,
  CMD_GET_TIME: 201,
  CMD_SET_TIME: 202,
  CMD_REG_EVENT: 500,
  CMD_CONNECT: 1000,
  CMD_EXIT: 1001,
  CMD_ENABLEDEVICE: 1002,
  CMD_DISABLEDEVICE: 1003,
  CMD_REFRESHDATA: 1013,
  CMD_GET_VERSION: 1100,
  CMD_AUTH: 1102,
  CMD_PREPARE_DATA: 1500,
  CMD_DATA: 1501,
  CMD_FREE_DATA: 1502,
  CMD_DATA_WRRQ: 1503,
  CMD_DATA_RDY: 1504,
  CMD_ACK_OK: 2000,
  CMD_ACK_ERROR: 2001,
  CMD_ACK_UNAUTH: 2005,
  CMD_ACK_UNKNOWN: 0xffff,
} as const

/** Realtime event flags (CMD_REG_EVENT data; the event code of a cmd 500 packet's session field). */
export const EF_ATTLOG = 1

/** The `fct` of a CMD_DATA_WRRQ for the user table (pyzk `FCT_USER`). */
export const FCT_USER = 5
