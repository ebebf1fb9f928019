// The graph page (templates/ui/graph/page.html): draws the JSON of data-graph-url with
// Cytoscape.js. Node size is PageRank, colour the category, edge style the relation. A tap
// on a node opens the memory. With data-link-url (editors only; the server checks again),
// dropping one node onto another opens the link form, which posts to that URL: the same link
// service as the memory page, so the new edge is a revision.
(function () {
  "use strict";
  const CATEGORY_COLOURS = {
    decision: "#2f5bdc", pattern: "#7b4fd6", warning: "#e07b00", learning: "#1f9d6b",
    fact: "#0f8fb3", note: "#8a93a3", conversation: "#c2508a",
  };
  const RELATIONS = {
    caused: { color: "#b83227", style: "solid" },
    supersedes: { color: "#6b7280", style: "dashed" },
    contradicts: { color: "#d11f1f", style: "dotted" },
    depends_on: { color: "#2f5bdc", style: "solid" },
    relates_to: { color: "#9aa3b2", style: "dashed" },
  };

  function styles() {
    const sheet = [
      {
        selector: "node",
        style: {
          width: "mapData(weight, 0, 1, 14, 58)",
          height: "mapData(weight, 0, 1, 14, 58)",
          "background-color": "#8a93a3",
          label: "data(label)",
          "font-size": 9,
          color: "#1b2333",
          "text-valign": "bottom",
          "text-margin-y": 3,
          "text-wrap": "ellipsis",
          "text-max-width": 130,
          "border-width": 1,
          "border-color": "#ffffff",
        },
      },
      { selector: "node[?archived]", style: { opacity: 0.45 } },
      { selector: "node.centre", style: { "border-width": 4, "border-color": "#172033" } },
      { selector: "node.drop-target", style: { "border-width": 5, "border-color": "#f2b705" } },
      {
        selector: "edge",
        style: {
          width: "mapData(strength, 0, 1, 1, 3.5)",
          "curve-style": "bezier",
          "target-arrow-shape": "triangle",
          "arrow-scale": 0.9,
          "line-color": "#9aa3b2",
          "target-arrow-color": "#9aa3b2",
        },
      },
    ];
    Object.entries(CATEGORY_COLOURS).forEach(([name, colour]) => {
      sheet.push({ selector: `node[category = "${name}"]`, style: { "background-color": colour } });
    });
    Object.entries(RELATIONS).forEach(([name, look]) => {
      sheet.push({
        selector: `edge[relation = "${name}"]`,
        style: { "line-color": look.color, "target-arrow-color": look.color, "line-style": look.style },
      });
    });
    return sheet;
  }

  function inside(box, point) {
    return point.x >= box.x1 && point.x <= box.x2 && point.y >= box.y1 && point.y <= box.y2;
  }

  function start(container) {
    const status = document.getElementById("graph-status");
    const linkForm = document.getElementById("graph-link");
    const linkUrl = container.getAttribute("data-link-url");
    fetch(container.getAttribute("data-graph-url"), { headers: { Accept: "application/json" } })
      .then((response) => {
        if (!response.ok) throw new Error(`the graph could not be loaded (${response.status})`);
        return response.json();
      })
      .then((data) => draw(container, data, status, linkUrl ? linkForm : null))
      .catch((error) => { status.textContent = String(error.message || error); });
  }

  function draw(container, data, status, linkForm) {
    const elements = [
      ...data.nodes.map((node) => ({ group: "nodes", data: node })),
      ...data.edges.map((edge) => ({ group: "edges", data: edge })),
    ];
    const cy = cytoscape({
      container: container,
      elements: elements,
      style: styles(),
      minZoom: 0.1,
      maxZoom: 4,
    });
    container.cy = cy; // for the browser tests: node positions and counts
    const centre = data.centre ? cy.getElementById(data.centre) : null;
    if (centre && centre.length) centre.addClass("centre");
    const layout = centre && centre.length
      ? { name: "concentric", concentric: (n) => (n.same(centre) ? 3 : n.neighborhood().contains(centre) ? 2 : 1), levelWidth: () => 1, minNodeSpacing: 40, animate: false }
      : { name: "cose", animate: false, randomize: false, nodeRepulsion: () => 9000, idealEdgeLength: () => 70, numIter: 600 };
    cy.layout(layout).run();
    cy.fit(undefined, 30);

    const described = () => {
      let text = `${cy.nodes().length} memories, ${cy.edges().length} links`;
      if (data.sampled) text += ` (the ${cy.nodes().length} with the highest PageRank of ${data.total})`;
      if (!cy.nodes().length) text = "No linked memories yet: link two memories to see them here.";
      status.textContent = text;
      container.setAttribute("data-nodes", String(cy.nodes().length));
      container.setAttribute("data-edges", String(cy.edges().length));
    };
    described();
    container.setAttribute("data-ready", "1");

    cy.on("tap", "node", (event) => {
      window.location.href = data.memory_url.replace("{id}", event.target.id());
    });

    if (!linkForm) return;
    let grabbedAt = null;
    const dropTarget = (node) => {
      const point = node.position();
      return cy.nodes().filter((other) => other.id() !== node.id() && inside(other.boundingBox({ includeLabels: false }), point)).first();
    };
    cy.on("grab", "node", (event) => { grabbedAt = { ...event.target.position() }; });
    cy.on("drag", "node", (event) => {
      cy.nodes(".drop-target").removeClass("drop-target");
      const target = dropTarget(event.target);
      if (target.length) target.addClass("drop-target");
    });
    cy.on("free", "node", (event) => {
      const source = event.target;
      const target = dropTarget(source);
      cy.nodes(".drop-target").removeClass("drop-target");
      if (!target.length) return;
      if (grabbedAt) source.position(grabbedAt);
      openLink(linkForm, source, target);
    });

    linkForm.querySelector("[data-cancel]").addEventListener("click", () => { linkForm.hidden = true; });
    linkForm.addEventListener("submit", (event) => {
      event.preventDefault();
      const error = linkForm.querySelector("[data-error]");
      error.textContent = "";
      fetch(linkForm.action, { method: "POST", body: new FormData(linkForm), headers: { Accept: "application/json" } })
        .then((response) => response.json().catch(() => ({})).then((body) => ({ response, body })))
        .then(({ response, body }) => {
          if (!response.ok) {
            const errors = body.errors || {};
            const text = Object.entries(errors).map(([field, messages]) => `${field}: ${[].concat(messages).join(" ")}`).join("; ");
            error.textContent = text || `The link was refused (${response.status}).`;
            return;
          }
          if (!cy.getElementById(body.edge.id).length) cy.add({ group: "edges", data: body.edge });
          linkForm.hidden = true;
          described();
          status.textContent = `Linked (${body.edge.relation}). ` + status.textContent;
        })
        .catch(() => { error.textContent = "The server could not be reached."; });
    });
  }

  function openLink(form, source, target) {
    form.elements.source.value = source.id();
    form.elements.target.value = target.id();
    form.querySelector('[data-end="source"]').textContent = source.data("label");
    form.querySelector('[data-end="target"]').textContent = target.data("label");
    form.querySelector("[data-error]").textContent = "";
    form.hidden = false;
    form.elements.relation.focus();
  }

  document.addEventListener("DOMContentLoaded", () => {
    const container = document.getElementById("graph");
    if (container && window.cytoscape) start(container);
  });
})();
