/** A real PNG for the tests: `size`×`size` pixels of seeded noise (so it does not compress away). */
import { crc32, deflateSync } from 'node:zlib';

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** An RGB PNG of noise from `seed`; 128 px is about 49 KB. */
export function noisePng(size: number, seed = 1): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits per channel, RGB, no interlace
  const rows = Buffer.alloc(size * (1 + size * 3));
  let state = seed >>> 0 || 1;
  for (let y = 0; y < size; y += 1) {
    const row = y * (1 + size * 3);
    rows[row] = 0; // no filter
    for (let i = 1; i <= size * 3; i += 1) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      rows[row + i] = state & 0xff;
    }
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([
    signature,
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
