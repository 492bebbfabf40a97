// The webhook events the sandbox sends, typed by src/events (the payloads are defined once, there).
import type { DataOf, Envelope, EventOf, ServiceEventKind as EventKind } from '../events/index.js';
import type { EventClock } from './clock.js';
import type { Delivery } from './delivery.js';

export interface EmitterOptions {
  eventClock: EventClock;
  delivery: Delivery;
  /** The kinds the agency subscribed to (the dashboard's list); others are not sent. */
  subscribed: ReadonlySet<EventKind>;
}

export function createEmitter(options: EmitterOptions) {
  return {
    /**
     * Timestamps and sends one event. Called in the same step as the state change it
     * describes, so that the API never shows a state that the events sent so far do not.
     * `timestamp` is given only for an event of the same instant as another (the extended
     * completed event shares the completed event's, so both set the same interview date).
     */
    emit<K extends EventKind>(kind: K, data: DataOf<K>, timestamp: string = options.eventClock.next()): EventOf<K> {
      const event = { event: kind, timestamp, data } as EventOf<K>;
      if (options.subscribed.has(kind)) options.delivery.send(event);
      return event;
    },
    /** Whether a kind is subscribed (the extended completed event is built only then). */
    subscribed(kind: EventKind): boolean {
      return options.subscribed.has(kind);
    },
    /** The dashboard's test button: sends whatever the subscriptions say. */
    sendTest(envelope: Envelope): void {
      options.delivery.send(envelope);
    },
  };
}

export type Emitter = ReturnType<typeof createEmitter>;
