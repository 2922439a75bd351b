// Draws images/icon.png (128x128): an ember-orange spark on a dark rounded
// square. Run once with `node scripts/make-icon.mjs`; the PNG is committed.
import { writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

const size = 128;
const pixels = Buffer.alloc(size * (size * 4 + 1));

function crc32(bytes) {
  let crc = ~0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return ~crc >>> 0;
}

function chunk(type, data) {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'ascii');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

function color(x, y) {
  const [cx, cy] = [x - 63.5, y - 63.5];
  const corner = Math.max(Math.abs(cx) - 44, 0) ** 2 + Math.max(Math.abs(cy) - 44, 0) ** 2;
  if (corner > 20 * 20) return [0, 0, 0, 0];
  // A four-pointed spark: |x|^0.5 + |y|^0.5 <= r^0.5.
  const spark = Math.sqrt(Math.abs(cx) / 46) + Math.sqrt(Math.abs(cy + 4) / 46) <= 1;
  const anvil = cy > 30 && cy < 42 && Math.abs(cx) < 40 - (cy - 30);
  if (spark) return [255, 140 + Math.round(cy / 2), 40, 255];
  if (anvil) return [200, 205, 215, 255];
  return [30, 34, 48, 255];
}

for (let y = 0; y < size; y++) {
  const row = y * (size * 4 + 1);
  pixels[row] = 0;
  for (let x = 0; x < size; x++) Buffer.from(color(x, y)).copy(pixels, row + 1 + x * 4);
}
const header = Buffer.alloc(13);
header.writeUInt32BE(size, 0);
header.writeUInt32BE(size, 4);
header.set([8, 6, 0, 0, 0], 8);
const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  chunk('IHDR', header),
  chunk('IDAT', deflateSync(pixels)),
  chunk('IEND', Buffer.alloc(0)),
]);
writeFileSync(new URL('../images/icon.png', import.meta.url), png);
