// sigma.js v4 (npm `sigma` + `graphology`, pinned in bench/scene/package.json)
// drawing the same graph: the `/map` bytes decoded by the page's decoder, the
// same positions (y flipped: sigma's y grows upwards), the same edges, a
// colour per language, the file name as the label. Sigma's defaults
// otherwise (its own label grid, its pan with inertia).
import Graph from 'graphology';
import Sigma from 'sigma';
import { boot, colourOf, fitScale, hex, viewSize, waitGpu, type BenchGraph, type Inspect } from './common';

function start(graph: BenchGraph): Inspect {
  const container = document.createElement('div');
  container.id = 'sigma';
  container.setAttribute('role', 'img');
  container.setAttribute('aria-label', 'sigma.js map');
  const { width, height } = viewSize();
  container.style.width = `${width}px`;
  container.style.height = `${height}px`;
  document.body.append(container);

  const g = new Graph({ type: 'directed', multi: false, allowSelfLoops: false });
  // Sizes in graph units (sigma v4's default `itemSizesReference: "positions"`):
  // a dot of 0.7 cell, as on the minimal page at the fitted zoom.
  const radius = 0.35;
  // Edges one pixel wide at the fitted zoom, as the minimal page's lines.
  const edgeSize = 1 / fitScale(graph, width, height);
  const colours = Array.from({ length: 17 }, (_, i) => hex(colourOf(i)));
  for (let i = 0; i < graph.nodes; i += 1) {
    const path = graph.paths[i] ?? String(i);
    g.addNode(String(i), {
      x: graph.positions[2 * i],
      y: -(graph.positions[2 * i + 1] ?? 0),
      size: radius,
      color: colours[graph.language[i] ?? 16],
      label: path.slice(path.lastIndexOf('/') + 1),
    });
  }
  for (let k = 0; k < graph.edges; k += 1) {
    g.addDirectedEdge(String(graph.edgePairs[2 * k]), String(graph.edgePairs[2 * k + 1]), { size: edgeSize, color: '#5a6270' });
  }
  const renderer = new Sigma(g, container);
  // The constructor rendered synchronously; make sure the GPU is done.
  const gl = renderer.getWebGLContext();
  waitGpu(gl);
  const camera = renderer.getCamera();
  // sigma's own full render, as after a camera change (it is private in the
  // types, public at run time; `scheduleRender` would wait for a frame).
  const render = (renderer as unknown as { render: () => void }).render.bind(renderer);
  let nudge = 1;
  return {
    sceneRedraw: () => {
      const t0 = performance.now();
      nudge = -nudge;
      const state = camera.getState();
      camera.setState({ ...state, x: state.x + nudge * 1e-6 });
      render();
      waitGpu(gl);
      return performance.now() - t0;
    },
    scene: () => ({ nodes: g.order, edges: g.size, camera: camera.getState(), radius }),
  };
}

void boot(start);
