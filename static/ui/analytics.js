// The analytics page (templates/ui/analytics/page.html): one Chart.js chart per
// <canvas data-chart="name">, from the JSON block #analytics-data (json_script: data only,
// so the Content-Security-Policy keeps refusing inline script). Each chart's table is in the
// page already; the chart is the picture of the same numbers.
(function () {
  "use strict";
  const PALETTE = ["#2f5bdc", "#e07b00", "#1f9d6b", "#c2508a", "#7b4fd6", "#0f8fb3", "#8a93a3"];
  const CATEGORY_COLOURS = {
    decision: "#2f5bdc", pattern: "#7b4fd6", warning: "#e07b00", learning: "#1f9d6b",
    fact: "#0f8fb3", note: "#8a93a3", conversation: "#c2508a",
  };
  const base = { responsive: true, maintainAspectRatio: false, animation: false };
  const horizontal = { ...base, indexAxis: "y", plugins: { legend: { display: false } } };

  const BUILD = {
    searches: (d) => ({
      type: "bar",
      data: {
        labels: d.labels,
        datasets: [
          { type: "bar", label: "searches", data: d.searches, backgroundColor: "#bcd0ff", yAxisID: "count", order: 2 },
          { type: "line", label: "p50 ms", data: d.p50, borderColor: PALETTE[0], backgroundColor: PALETTE[0], yAxisID: "ms" },
          { type: "line", label: "p95 ms", data: d.p95, borderColor: PALETTE[1], backgroundColor: PALETTE[1], yAxisID: "ms" },
        ],
      },
      options: {
        ...base,
        scales: {
          count: { position: "left", beginAtZero: true, title: { display: true, text: "searches" } },
          ms: { position: "right", beginAtZero: true, title: { display: true, text: "ms" }, grid: { drawOnChartArea: false } },
        },
      },
    }),
    rates: (d) => ({
      type: "line",
      data: {
        labels: d.labels,
        datasets: [
          { label: "evidence gap %", data: d.gap, borderColor: PALETTE[1], backgroundColor: PALETTE[1] },
          { label: "no result %", data: d.zero, borderColor: "#d11f1f", backgroundColor: "#d11f1f" },
        ],
      },
      options: { ...base, scales: { y: { beginAtZero: true, suggestedMax: 100, title: { display: true, text: "% of searches" } } } },
    }),
    strategies: (d) => ({
      type: "bar",
      data: {
        labels: d.labels,
        datasets: [
          { type: "bar", label: "results ranked", data: d.returned, backgroundColor: "#bcd0ff", yAxisID: "count", order: 2 },
          { type: "line", label: "useful % (judged)", data: d.useful, borderColor: PALETTE[2], backgroundColor: PALETTE[2], showLine: false, pointRadius: 7, pointStyle: "rectRot", yAxisID: "rate", order: 1 },
        ],
      },
      options: {
        ...base,
        scales: {
          count: { position: "left", beginAtZero: true },
          rate: { position: "right", min: 0, max: 100, grid: { drawOnChartArea: false } },
        },
      },
    }),
    queries: (d) => ({
      type: "bar",
      data: { labels: d.labels, datasets: [{ label: "searches", data: d.searches, backgroundColor: PALETTE[0] }] },
      options: horizontal,
    }),
    memories: (d) => ({
      type: "bar",
      data: { labels: d.labels, datasets: [{ label: "returned", data: d.returned, backgroundColor: PALETTE[3] }] },
      options: horizontal,
    }),
    growth: (d) => ({
      type: "line",
      data: {
        labels: d.labels,
        datasets: Object.entries(d.series).map(([category, totals], i) => ({
          label: category,
          data: totals,
          spanGaps: true,
          borderColor: CATEGORY_COLOURS[category] || PALETTE[i % PALETTE.length],
          backgroundColor: CATEGORY_COLOURS[category] || PALETTE[i % PALETTE.length],
        })),
      },
      options: { ...base, scales: { y: { beginAtZero: true, title: { display: true, text: "memories" } } } },
    }),
  };

  document.addEventListener("DOMContentLoaded", () => {
    const source = document.getElementById("analytics-data");
    if (!source || !window.Chart) return;
    const data = JSON.parse(source.textContent);
    document.querySelectorAll("canvas[data-chart]").forEach((canvas) => {
      const name = canvas.getAttribute("data-chart");
      const build = BUILD[name];
      if (!build || !data[name]) return;
      const chart = new Chart(canvas, build(data[name]));
      const points = chart.data.datasets.reduce((n, set) => n + set.data.filter((v) => v !== null).length, 0);
      canvas.setAttribute("data-points", String(points));
      if (!points) canvas.closest(".chartbox").classList.add("nodata");
    });
  });
})();
