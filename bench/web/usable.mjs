// When a page of the dashboard bench is usable: an init script (installed in every page the
// bench opens) that checks the page's data-test hook on every animation frame and, once it holds,
// stores performance.now() in window.__podiumBenchUsableAt from a task queued in that frame at
// the priority of user input (scheduler.postTask 'user-blocking'): the frame with the data has
// been painted and the main thread would handle a click. (A setTimeout there would measure the
// timer queue instead, which Chromium serves after the page's 50 summary responses.)
//
//   runs page    /runs           a full first page (50 rows) of the runs table, each with its link
//   run page     /runs/{id}      the metrics section with points and its four charts' canvases
//   compare page /compare?runs=  a table row for every run asked for, and the curves chart drawn
export function probe() {
  const path = location.pathname;
  const rows = (sel) => document.querySelectorAll(sel).length;
  let ready = null;
  if (path === '/runs') {
    ready = () => rows('[data-test=runs-table] tbody tr a[href^="/runs/"]') >= 50;
  } else if (/^\/runs\/run_/.test(path)) {
    ready = () => {
      const c = document.querySelector('[data-test=run-chart]');
      return !!c && Number(c.getAttribute('data-points')) > 0 && c.querySelectorAll('canvas').length >= 4;
    };
  } else if (path === '/compare') {
    const want = (new URLSearchParams(location.search).get('runs') || '').split(',').filter(Boolean).length;
    ready = () => rows('[data-test=compare-table] tbody tr') >= want &&
      Number(document.querySelector('[data-test=compare-curves]')?.getAttribute('data-points')) > 0 &&
      rows('[data-test=compare-curves] canvas') >= 1;
  }
  if (!ready) return;
  const frame = () => {
    const mark = () => { window.__podiumBenchUsableAt = performance.now(); };
    if (ready()) {
      if (window.scheduler?.postTask) window.scheduler.postTask(mark, { priority: 'user-blocking' });
      else setTimeout(mark, 0);
    }
    else requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}
