#!/usr/bin/env node
// Writes build/icon.png (512×512, the size electron-builder needs for macOS and converts for
// Windows and Linux): a macaron — two rounded pink shells around a cream filling — drawn with
// signed distances and written with zlib, so the icon needs no image tool and no binary source.
// Run: node build/make-icon.mjs
import { writeFileSync } from "node:fs";
import { deflateSync } from "node:zlib";

const SIZE = 512;

/** Signed distance to a rounded rectangle centred at (cx, cy). Negative inside. */
function roundedRect(x, y, cx, cy, halfW, halfH, radius) {
  const qx = Math.abs(x - cx) - halfW + radius;
  const qy = Math.abs(y - cy) - halfH + radius;
  const outside = Math.hypot(Math.max(qx, 0), Math.max(qy, 0));
  return outside + Math.min(Math.max(qx, qy), 0) - radius;
}

const layers = [
  // [distance function, rgb], painted bottom to top.
  [(x, y) => roundedRect(x, y, 256, 256, 240, 240, 112), [253, 240, 244]], // tile
  [(x, y) => roundedRect(x, y, 256, 180, 170, 62, 62), [236, 118, 152]], // top shell
  [(x, y) => roundedRect(x, y, 256, 332, 170, 62, 62), [236, 118, 152]], // bottom shell
  [(x, y) => roundedRect(x, y, 256, 256, 158, 26, 26), [255, 244, 214]], // filling
  [(x, y) => roundedRect(x, y, 226, 150, 80, 10, 10), [246, 170, 194]], // highlight
];

const raw = Buffer.alloc((SIZE * 4 + 1) * SIZE);
for (let y = 0; y < SIZE; y++) {
  const row = y * (SIZE * 4 + 1);
  raw[row] = 0; // filter: none
  for (let x = 0; x < SIZE; x++) {
    let [r, g, b, a] = [0, 0, 0, 0];
    for (const [distance, color] of layers) {
      // One pixel of anti-aliasing along every edge.
      const coverage = Math.min(Math.max(0.5 - distance(x + 0.5, y + 0.5), 0), 1);
      if (coverage === 0) continue;
      const outA = coverage + a * (1 - coverage);
      r = (color[0] * coverage + r * a * (1 - coverage)) / outA;
      g = (color[1] * coverage + g * a * (1 - coverage)) / outA;
      b = (color[2] * coverage + b * a * (1 - coverage)) / outA;
      a = outA;
    }
    raw.set([Math.round(r), Math.round(g), Math.round(b), Math.round(a * 255)], row + 1 + x * 4);
  }
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buffer) {
  let c = 0xffffffff;
  for (const byte of buffer) c = crcTable[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

const header = Buffer.alloc(13);
header.writeUInt32BE(SIZE, 0);
header.writeUInt32BE(SIZE, 4);
header.set([8, 6, 0, 0, 0], 8); // 8-bit RGBA, no interlace
const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  chunk("IHDR", header),
  chunk("IDAT", deflateSync(raw, { level: 9 })),
  chunk("IEND", Buffer.alloc(0)),
]);
const out = new URL("./icon.png", import.meta.url);
writeFileSync(out, png);
console.log(`wrote ${out.pathname} (${png.length} bytes)`);
