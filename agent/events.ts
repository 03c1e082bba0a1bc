import { EventEmitter } from 'node:events'
import type { Logger } from 'pino'

/** What happens in the agent, for status, metrics and logs to follow (zigbee2mqtt-style event bus). */
export interface AgentEvents {
  /** A device's transport changed state (a serial port opened or vanished, an MQTT client came or went). */
  deviceState: { deviceId: string; state: 'connected' | 'disconnected' | 'waiting'; detail?: string }
  /** Punches of a device reached the spool. */
  punchesSpooled: { deviceId: string; count: number; lastPunchedAt: string; skewSeconds: number | undefined }
  /** Punches a device sent again that were stored lately already (stored again; the cloud keeps one). */
  punchesResent: { deviceId: string; count: number }
  /** A frame could not be read. */
  frameMalformed: { deviceId: string; error: string }
  /** Punches or frames went to dead letters. */
  deadLettered: { deviceId: string; reason: string; count: number }
  /** The spool refused punches: full, or the disk is. */
  spoolFull: { bytes: number; maxBytes: number }
  /** The spool takes punches again: a removal made room after it refused some. */
  spoolHasRoom: { bytes: number; maxBytes: number }
  /** Punches the cloud has accepted (created or duplicate). */
  punchesForwarded: { count: number }
  /** A request of an ADMS terminal was answered (or refused before it was read). */
  admsRequest: {
    route: 'handshake' | 'upload' | 'poll' | 'result' | 'ping' | 'other'
    outcome: 'ok' | 'refused' | 'unknown_device' | 'bad_request' | 'not_found' | 'too_large' | 'unavailable'
  }
  /** A request to the cloud failed and will be retried. */
  forwardFailed: { error: string; retryInMs: number }
}

/** A listener may be async: the bus does not wait for it, but catches what it rejects with. */
type Listener<K extends keyof AgentEvents> = (event: AgentEvents[K]) => void | Promise<void>

/**
 * A typed event bus whose listeners cannot crash the daemon: a listener that throws, or whose
 * promise rejects, is logged and the others still run. A rejection left unhandled would end the
 * process (Node's default `--unhandled-rejections=throw`).
 */
export class EventBus {
  private readonly emitter = new EventEmitter()

  constructor(private readonly log: Logger) {
    this.emitter.setMaxListeners(100)
  }

  on<K extends keyof AgentEvents>(name: K, listener: Listener<K>): () => void {
    const failed = (err: unknown) => this.log.error({ err, event: name }, 'event listener failed')
    const safe = (event: AgentEvents[K]) => {
      try {
        const result = listener(event)
        if (result instanceof Promise) result.catch(failed)
      } catch (err) {
        failed(err)
      }
    }
    this.emitter.on(name, safe)
    return () => this.emitter.off(name, safe)
  }

  emit<K extends keyof AgentEvents>(name: K, event: AgentEvents[K]): void {
    this.emitter.emit(name, event)
  }
}
