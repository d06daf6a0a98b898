// Builds `/map` bodies (docs/page-protocol.md, "The map"): for the mock
// server, and the page's tests (test/mapFixture.ts).
//
// fx = { hash, nodes: [{path, x, y, language, folder}], edges: [[from, to, count]],
//        folders: [{path, rect: [x, y, w, h], parent}] }, nodes sorted by path.
const pad4 = (n) => (n + 3) & ~3;

export function encodeMap(fx) {
  const enc = new TextEncoder();
  const n = fx.nodes.length;
  const e = fx.edges.length;
  const f = fx.folders.length;
  const hash = enc.encode(fx.hash);
  const nodePaths = fx.nodes.map((node) => enc.encode(node.path));
  const folderPaths = fx.folders.map((folder) => enc.encode(folder.path));
  const s = [...nodePaths, ...folderPaths].reduce((sum, b) => sum + b.length, 0);
  let size = 32;
  size = pad4(size + hash.length);
  size += 8 * n;
  size = pad4(size + n);
  size += 4 * n + 4 * n + 8 * e + 4 * e + 16 * f + 4 * f + 4 * f + s;
  const buf = new ArrayBuffer(size);
  const v = new DataView(buf);
  const bytes = new Uint8Array(buf);
  [0x4f, 0x52, 0x42, 0x4d].forEach((b, i) => {
    v.setUint8(i, b);
  });
  v.setUint32(4, 1, true);
  v.setUint32(8, n, true);
  v.setUint32(12, e, true);
  v.setUint32(16, f, true);
  v.setUint32(20, s, true);
  v.setUint32(24, hash.length, true);
  v.setUint32(28, 0, true);
  let o = 32;
  bytes.set(hash, o);
  o = pad4(o + hash.length);
  for (const node of fx.nodes) {
    v.setFloat32(o, node.x, true);
    v.setFloat32(o + 4, node.y, true);
    o += 8;
  }
  fx.nodes.forEach((node, i) => {
    v.setUint8(o + i, node.language);
  });
  o = pad4(o + n);
  for (const node of fx.nodes) {
    v.setUint32(o, node.folder, true);
    o += 4;
  }
  let end = 0;
  for (const p of nodePaths) {
    end += p.length;
    v.setUint32(o, end, true);
    o += 4;
  }
  for (const [from, to] of fx.edges) {
    v.setUint32(o, from, true);
    v.setUint32(o + 4, to, true);
    o += 8;
  }
  for (const [, , count] of fx.edges) {
    v.setUint32(o, count, true);
    o += 4;
  }
  for (const folder of fx.folders) {
    folder.rect.forEach((x, i) => {
      v.setFloat32(o + 4 * i, x, true);
    });
    o += 16;
  }
  for (const folder of fx.folders) {
    v.setUint32(o, folder.parent ?? 0xffffffff, true);
    o += 4;
  }
  for (const p of folderPaths) {
    end += p.length;
    v.setUint32(o, end, true);
    o += 4;
  }
  for (const p of [...nodePaths, ...folderPaths]) {
    bytes.set(p, o);
    o += p.length;
  }
  return buf;
}


/** A seeded PRNG (mulberry32). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A made-up workspace of `count` files for the mock and for trying the
 * renderer at size: `pkgNN/mN/fileNN.ts` in a grid of folders, each file
 * importing two others (mostly in its own package).
 */
export function syntheticMap(count, seed = 1) {
  const random = rng(seed);
  const per = 36; // files per folder, a 6x6 block
  const subs = 8; // folders per package, 4 x 2
  const folderCount = Math.max(1, Math.ceil(count / per));
  const pkgCount = Math.ceil(folderCount / subs);
  const cols = Math.max(1, Math.ceil(Math.sqrt(pkgCount)));
  const sub = 7; // a folder's side (6 cells + 1 gap)
  const pkgW = 4 * sub + 1;
  const pkgH = 2 * sub + 1;
  const folders = [{ path: '', rect: [0, 0, cols * (pkgW + 2), Math.ceil(pkgCount / cols) * (pkgH + 2)], parent: null }];
  const raw = [];
  const enc = new TextEncoder();
  for (let p = 0; p < pkgCount; p += 1) {
    const px = (p % cols) * (pkgW + 2);
    const py = Math.floor(p / cols) * (pkgH + 2);
    const pkg = `pkg${String(p).padStart(3, '0')}`;
    const pkgIndex = folders.length;
    folders.push({ path: pkg, rect: [px, py, pkgW, pkgH], parent: 0 });
    for (let s = 0; s < subs && raw.length < count; s += 1) {
      const fx = px + 1 + (s % 4) * sub;
      const fy = py + 1 + Math.floor(s / 4) * sub;
      const folderIndex = folders.length;
      folders.push({ path: `${pkg}/m${s}`, rect: [fx, fy, sub - 1, sub - 1], parent: pkgIndex });
      for (let k = 0; k < per && raw.length < count; k += 1) {
        const ext = k % 9 === 0 ? ['md', 9] : k % 7 === 0 ? ['json', 10] : k % 5 === 0 ? ['rs', 3] : ['ts', 0];
        raw.push({ path: `${pkg}/m${s}/file${String(k).padStart(2, '0')}.${ext[0]}`, x: fx + (k % 6) + 0.5, y: fy + Math.floor(k / 6) + 0.5, language: ext[1], folder: folderIndex, pkg: p });
      }
    }
  }
  const cmp = (a, b) => {
    const x = enc.encode(a.path);
    const y = enc.encode(b.path);
    for (let i = 0; i < Math.min(x.length, y.length); i += 1) if (x[i] !== y[i]) return x[i] - y[i];
    return x.length - y.length;
  };
  raw.sort(cmp);
  const seen = new Set();
  const edges = [];
  for (let i = 0; i < raw.length; i += 1) {
    for (let j = 0; j < 2; j += 1) {
      let to;
      if (random() < 0.7) {
        const near = i + Math.floor((random() - 0.5) * 60);
        to = Math.min(raw.length - 1, Math.max(0, near));
      } else to = Math.floor(random() * raw.length);
      if (to === i || seen.has(`${i},${to}`)) continue;
      seen.add(`${i},${to}`);
      edges.push([i, to, 1 + Math.floor(random() * 3)]);
    }
  }
  const hash = (count * 2654435761 + seed).toString(16).padStart(12, '0').slice(-12);
  return { hash, nodes: raw.map(({ pkg: _pkg, ...n }) => n), edges, folders };
}
