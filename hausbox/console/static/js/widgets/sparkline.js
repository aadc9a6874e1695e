// A 24-hour sparkline (GET /history/sparkline/...: up to 48 half-hour means) drawn as one SVG
// polyline: too small a job for the chart library, and SVG attributes are not styles (CSP-safe).

const NS = "http://www.w3.org/2000/svg";

export function sparkline(values, label) {
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("class", "sparkline");
  svg.setAttribute("viewBox", "0 0 100 32");
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", label);
  let points = (values || []).filter((v) => typeof v === "number");
  if (!points.length) return svg;
  if (points.length === 1) points = [points[0], points[0]]; // one half-hour so far: a flat line
  const min = Math.min(...points);
  const span = Math.max(...points) - min || 1;
  const line = document.createElementNS(NS, "polyline");
  line.setAttribute("fill", "none");
  line.setAttribute("stroke", "currentColor");
  line.setAttribute("stroke-width", "1.5");
  line.setAttribute("vector-effect", "non-scaling-stroke");
  line.setAttribute("points", points.map((v, i) => `${(i / (points.length - 1)) * 100},${30 - ((v - min) / span) * 28}`).join(" "));
  svg.append(line);
  return svg;
}
