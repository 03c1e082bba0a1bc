import { zoneOffsetMinutes } from '../../../shared/time.js'

/**
 * The handshake reply of ZKTeco's Attendance PUSH protocol (2.x, "Server Configuration Information
 * Reading"): a terminal starting up, or coming back after an error, sends
 * `GET /iclock/cdata?SN=..&options=all&pushver=..` and takes its upload settings from the answer.
 */
interface HandshakeSettings {
  serialNumber: string
  /** The terminal's resume cursor for attendance records, as it last reported it; none: send everything. */
  attlogStamp: string | undefined
  /** Seconds between command polls (Delay). */
  pollSeconds: number
  /** Seconds to wait after a failed request (ErrorDelay). */
  errorDelaySeconds: number
  /** Upload each record as it is made (Realtime=1), rather than every TransInterval minutes. */
  realtime: boolean
  /** The IANA zone the agent reads this terminal's wall times in. */
  timeZone: string
  /** ms: the instant whose offset is announced (a zone with daylight saving changes it). */
  now: number
}

/**
 * The `TimeZone` option: the protocol gives whole-hour zones in hours (`8`) and others in minutes
 * (`330` for India), and the terminal tells them apart by size. A wrong value is the known cause of
 * terminals whose clock jumps by hours after they connect (the time itself comes from the reply's
 * `Date` header, which is UTC): so the agent derives it from the zone it reads the records in, and
 * the two can never disagree.
 */
export function timeZoneOption(timeZone: string, now: number): string {
  const minutes = zoneOffsetMinutes(now, timeZone)
  return String(minutes % 60 === 0 ? minutes / 60 : minutes)
}

/**
 * The reply's lines. Only attendance is asked for (`TransFlag=TransData AttLog`): operation logs,
 * photos and enrolment data are not the agent's business, and each would cost the terminal and
 * the LAN an upload. `OPERLOGStamp` and `ATTPHOTOStamp` of 9999 tell the terminal those logs have
 * been taken, so it does not try to send their history. `Encrypt=None`: the encrypted variant
 * (push 2.4's /iclock/exchange) is not offered; the LAN is the boundary
 * (see docs/site-agent/push-terminals.md).
 */
export function handshakeReply(settings: HandshakeSettings): string {
  const lines = [
    `GET OPTION FROM: ${settings.serialNumber}`,
    `ATTLOGStamp=${settings.attlogStamp ?? 'None'}`,
    'OPERLOGStamp=9999',
    'ATTPHOTOStamp=9999',
    `ErrorDelay=${settings.errorDelaySeconds}`,
    `Delay=${settings.pollSeconds}`,
    'TransTimes=00:00;14:05',
    'TransInterval=1',
    'TransFlag=TransData AttLog',
    `TimeZone=${timeZoneOption(settings.timeZone, settings.now)}`,
    `Realtime=${settings.realtime ? 1 : 0}`,
    'Encrypt=None',
  ]
  return `${lines.join('\n')}\n`
}
