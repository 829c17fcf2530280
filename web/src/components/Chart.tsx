// One uPlot line chart: series over steps, optional shaded band (the steady state) and step
// markers (compile and warm-up steps). Redraws in place when data changes.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries { label: string; values: (number | null)[]; color: string }

export interface ChartProps {
  title: string;
  x: number[];
  series: ChartSeries[];
  xLabel?: string;
  /** y range to shade, e.g. the steady step-time band */
  band?: [number, number] | null;
  /** x positions to mark with a dashed line and a label */
  markers?: { x: number; label: string }[];
  height?: number;
  /** x as time (seconds since epoch) rather than a number */
  timeAxis?: boolean;
}

function cssVar(name: string, fallback: string) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

export function Chart(p: ChartProps) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const extras = useRef({ band: p.band, markers: p.markers });
  extras.current = { band: p.band, markers: p.markers };
  const shape = `${p.series.map((s) => s.label).join('|')}:${p.timeAxis ? 't' : 'n'}`;

  useEffect(() => {
    if (!host.current) return;
    const fg = cssVar('--fg-muted', '#666');
    const grid = cssVar('--grid', '#ddd');
    const opts: uPlot.Options = {
      width: Math.max(280, host.current.clientWidth),
      height: p.height ?? 220,
      scales: { x: { time: !!p.timeAxis } },
      legend: { live: true },
      cursor: { drag: { x: true, y: false } },
      axes: [
        { stroke: fg, grid: { stroke: grid }, label: p.xLabel },
        { stroke: fg, grid: { stroke: grid }, size: 60 },
      ],
      series: [{ label: p.xLabel ?? 'step' }, ...p.series.map((s) => ({ label: s.label, stroke: s.color, width: 1.5, spanGaps: true, points: { show: false } }))],
      hooks: {
        drawClear: [(u: uPlot) => {
          const band = extras.current.band;
          if (!band) return;
          const y0 = u.valToPos(band[1], 'y', true);
          const y1 = u.valToPos(band[0], 'y', true);
          const ctx = u.ctx;
          ctx.save();
          ctx.fillStyle = cssVar('--band', 'rgba(47,95,208,0.12)');
          ctx.fillRect(u.bbox.left, Math.min(y0, y1), u.bbox.width, Math.abs(y1 - y0));
          ctx.restore();
        }],
        draw: [(u: uPlot) => {
          const markers = extras.current.markers ?? [];
          const ctx = u.ctx;
          ctx.save();
          ctx.strokeStyle = cssVar('--warn', '#b7791f');
          ctx.fillStyle = ctx.strokeStyle;
          ctx.setLineDash([4, 4]);
          ctx.font = `${11 * devicePixelRatio}px sans-serif`;
          for (const m of markers) {
            const x = u.valToPos(m.x, 'x', true);
            if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
            ctx.beginPath();
            ctx.moveTo(x, u.bbox.top);
            ctx.lineTo(x, u.bbox.top + u.bbox.height);
            ctx.stroke();
            ctx.fillText(m.label, x + 3, u.bbox.top + 12 * devicePixelRatio);
          }
          ctx.restore();
        }],
      },
    };
    plot.current = new uPlot(opts, [p.x, ...p.series.map((s) => s.values)] as uPlot.AlignedData, host.current);
    const ro = new ResizeObserver(() => {
      if (host.current && plot.current) plot.current.setSize({ width: Math.max(280, host.current.clientWidth), height: p.height ?? 220 });
    });
    ro.observe(host.current);
    return () => { ro.disconnect(); plot.current?.destroy(); plot.current = null; };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [shape]);

  useEffect(() => {
    plot.current?.setData([p.x, ...p.series.map((s) => s.values)] as uPlot.AlignedData);
  }, [p.x, p.series, p.band, p.markers]);

  return (
    <figure class="chart">
      <figcaption>{p.title}</figcaption>
      <div ref={host} role="img" aria-label={`${p.title} chart`} />
    </figure>
  );
}
