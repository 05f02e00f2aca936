// A page's refreshing: runs `load` now and then every `ms` while the page is shown and the
// tab visible; one load at a time. The returned function stops it.
export function every(ms, load) {
  let stopped = false;
  let timer = 0;
  const tick = async () => {
    if (stopped) return;
    if (!document.hidden) {
      try {
        await load();
      } catch {
        // load shows its own errors; keep refreshing
      }
    }
    if (!stopped) timer = setTimeout(tick, ms);
  };
  tick();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

// What a failed call says on the page.
export function problem(error) {
  if (error && error.httpStatus === 403) {
    return `This token may not do that: ${error.message}`;
  }
  return `Herald answered with an error: ${error ? error.message : 'unknown'}`;
}
