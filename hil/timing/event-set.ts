// Events on a backend made together and destroyed together.
import type { NativeBackend } from '../addon-types.js';

/** Events made by `make()` and destroyed together by `destroyAll()`, once nothing queued uses them. */
export class EventSet {
  private readonly events: number[] = [];
  constructor(private readonly b: NativeBackend) {}
  readonly make = (): number => {
    const e = this.b.createEvent();
    this.events.push(e);
    return e;
  };
  destroyAll(): void {
    for (const e of this.events.splice(0)) this.b.destroyEvent(e);
  }
}
