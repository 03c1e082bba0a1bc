/**
 * A part of the agent that runs: started in order, stopped in reverse
 * (docs/development/architecture.md#style).
 */
export interface Component {
  start(): Promise<void>
  stop(): Promise<void>
}
