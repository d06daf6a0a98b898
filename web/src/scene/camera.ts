/**
 * The map's camera: the world point at the view's centre and the zoom in
 * CSS pixels per world unit (a file cell is one unit). Pure math, no DOM.
 */
import type { Rect } from './model';

export interface Camera {
  x: number;
  y: number;
  zoom: number;
}

export const MIN_ZOOM = 0.02;
export const MAX_ZOOM = 200;

export const clampZoom = (zoom: number): number => Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, zoom));

export function worldToScreen(cam: Camera, width: number, height: number, wx: number, wy: number): [number, number] {
  return [(wx - cam.x) * cam.zoom + width / 2, (wy - cam.y) * cam.zoom + height / 2];
}

export function screenToWorld(cam: Camera, width: number, height: number, sx: number, sy: number): [number, number] {
  return [(sx - width / 2) / cam.zoom + cam.x, (sy - height / 2) / cam.zoom + cam.y];
}

/** The world rectangle the view shows. */
export function viewRect(cam: Camera, width: number, height: number): Rect {
  const w = width / cam.zoom;
  const h = height / cam.zoom;
  return { x: cam.x - w / 2, y: cam.y - h / 2, w, h };
}

/** The camera that shows `rect` whole, with `margin` CSS pixels around it. */
export function fitCamera(rect: Rect, width: number, height: number, margin = 24): Camera {
  const w = Math.max(rect.w, 1);
  const h = Math.max(rect.h, 1);
  const zoom = clampZoom(Math.min((width - 2 * margin) / w, (height - 2 * margin) / h));
  return { x: rect.x + rect.w / 2, y: rect.y + rect.h / 2, zoom: zoom > 0 ? zoom : MIN_ZOOM };
}

/** Zooms by `factor` keeping the world point under (sx, sy) in place. */
export function zoomAt(cam: Camera, width: number, height: number, sx: number, sy: number, factor: number): Camera {
  const zoom = clampZoom(cam.zoom * factor);
  const [wx, wy] = screenToWorld(cam, width, height, sx, sy);
  return { x: wx - (sx - width / 2) / zoom, y: wy - (sy - height / 2) / zoom, zoom };
}

/** Pans by (dx, dy) CSS pixels (the content follows the pointer). */
export function panBy(cam: Camera, dx: number, dy: number): Camera {
  return { x: cam.x - dx / cam.zoom, y: cam.y - dy / cam.zoom, zoom: cam.zoom };
}

/**
 * The CSS transform (`translate(tx, ty) scale(k)`, origin top-left) that
 * turns a frame drawn with `from` into what `to` shows.
 */
export function transformBetween(from: Camera, to: Camera, width: number, height: number): { k: number; tx: number; ty: number } {
  const k = to.zoom / from.zoom;
  return {
    k,
    tx: (width / 2) * (1 - k) + (from.x - to.x) * to.zoom,
    ty: (height / 2) * (1 - k) + (from.y - to.y) * to.zoom,
  };
}

const ease = (t: number): number => (t < 0.5 ? 4 * t * t * t : 1 - (-2 * t + 2) ** 3 / 2);

/** A point of a flight from `a` to `b` at `t` in 0..1: eased, the zoom geometric. */
export function flight(a: Camera, b: Camera, t: number): Camera {
  const s = ease(Math.min(1, Math.max(0, t)));
  return {
    x: a.x + (b.x - a.x) * s,
    y: a.y + (b.y - a.y) * s,
    zoom: a.zoom * (b.zoom / a.zoom) ** s,
  };
}

export const sameCamera = (a: Camera, b: Camera): boolean => a.x === b.x && a.y === b.y && a.zoom === b.zoom;
