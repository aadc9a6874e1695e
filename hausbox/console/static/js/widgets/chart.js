// Charts through the vendored uPlot (vendor/VENDORED.md): canvas drawing, styles set through the
// DOM (allowed by the CSP), no inline markup. The chart follows its container's width.

import uPlot from "../../vendor/uplot/uPlot.esm.js";

const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

export function colors() {
  return { hp: css("--hp"), hc: css("--hc"), prod: css("--prod"), text: css("--muted"), line: css("--line"), accent: css("--accent") };
}

// bars(widthFactor) -> a uPlot path builder for bar series.
export const bars = (size = 0.7) => uPlot.paths.bars({ size: [size, 80] });

export function chart(container, options, data) {
  const c = colors();
  const axis = { stroke: c.text, grid: { stroke: c.line, width: 1 }, ticks: { stroke: c.line, width: 1 } };
  const plot = new uPlot(
    {
      width: Math.max(280, container.clientWidth),
      height: options.height || 260,
      axes: [{ ...axis }, { ...axis, size: 80, values: options.yValues }],
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
      ...options,
    },
    data,
    container,
  );
  const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, container.clientWidth), height: options.height || 260 }));
  resize.observe(container);
  plot.dispose = () => {
    resize.disconnect();
    plot.destroy();
  };
  return plot;
}

export const seconds = (iso) => Date.parse(iso) / 1000;
