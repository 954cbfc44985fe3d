// When each probe job's handler started, for consumers that run in this process: the
// handler may start before the producer learns the job's id, so either side may come first.
export function startTimes() {
  const times = new Map();
  const waiting = new Map();
  return {
    started(id, at) {
      times.set(String(id), at);
      waiting.get(String(id))?.(at);
    },
    of(id) {
      const at = times.get(String(id));
      return at !== undefined ? Promise.resolve(at) : new Promise((resolve) => waiting.set(String(id), resolve));
    },
  };
}
