import type { Logger } from 'pino'
import type { AgentConfig } from '../config/schema.js'
import type { EventBus } from '../events.js'
import type { PunchSink } from '../intake/punch-sink.js'

/** What the inputs are built from: they hand frames to the sink and report on the bus. */
export interface InputContext {
  config: AgentConfig
  sink: PunchSink
  events: EventBus
  log: Logger
}
