// One request at a time, and one more when something asked meanwhile: the refresh the Changes
// and Reviews tabs share. A call while a run is in flight returns at once and makes the running
// loop go round once more (however many such calls came), so the last answer is never older
// than the last call.

/** Options of {@link singleFlight}. */
export interface SingleFlightHooks {
  /** Called when a flight starts (not for the extra rounds it runs). */
  onStart?: () => void;
  /** Called when a flight ends, after its last round (also when a round threw). */
  onEnd?: () => void;
}

/** Wraps `round` so that at most one runs at a time; see the module comment. */
export function singleFlight(round: () => Promise<void>, hooks: SingleFlightHooks = {}): () => Promise<void> {
  let inflight = false;
  let again = false;
  return async () => {
    if (inflight) {
      again = true;
      return;
    }
    inflight = true;
    hooks.onStart?.();
    try {
      do {
        again = false;
        await round();
      } while (again);
    } finally {
      inflight = false;
      hooks.onEnd?.();
    }
  };
}
