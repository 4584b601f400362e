//! Chunk states at rest in fewer bytes: llama.cpp's state of a chunk with
//! its f16 K sections quantized to q8_0 (8.5 bits per value) and its f16 V
//! sections to q6_K (6.56 bits), everything else (cell positions, section
//! headers, K or V already quantized by the cache type) kept verbatim.
//! 0.47× the f16 bytes per token on the 0.5B model.
//!
//! Keys get q8_0 because an error in a key is exponentiated by the softmax;
//! values are averaged by it, and q6_K's 16-value sub-blocks with their own
//! scales keep their outlier channels. Both are ggml's own quantizers, so a
//! state decodes to the same f16 values wherever ape-chat runs.
//!
//! Values are quantized in cell-major order (one token's values in a row),
//! also for V stored transposed, so a block never mixes two tokens' heads
//! when the row length is a multiple of the block.
//!
//! Layout: `b"APEQ"`, u32 version, u64 length of the decoded state, u32
//! segment count, then segments in order, each: u8 codec, u8 transposed,
//! u16 0, u32 values per row, u32 rows, u64 decoded length, u64 encoded
//! length, the encoded bytes. Decoding writes the segments one after another.

use llama_cpp_sys_2 as sys;

use super::seqstate::{self, SectionLayout};

const MAGIC: &[u8; 4] = b"APEQ";
const VERSION: u32 = 1;
const SEGMENT_HEADER: usize = 28;

/// How a segment's bytes are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Codec {
    Verbatim = 0,
    /// f16 values as q8_0 blocks.
    Q8 = 1,
    /// f16 values as q6_K blocks.
    Q6k = 2,
}

impl Codec {
    fn from_u8(b: u8) -> Option<Self> {
        [Codec::Verbatim, Codec::Q8, Codec::Q6k]
            .into_iter()
            .find(|c| *c as u8 == b)
    }

    fn ggml(self) -> Option<sys::ggml_type> {
        match self {
            Codec::Verbatim => None,
            Codec::Q8 => Some(sys::GGML_TYPE_Q8_0),
            Codec::Q6k => Some(sys::GGML_TYPE_Q6_K),
        }
    }
}

/// One data section to code: its byte range in the state, and its shape as
/// `rows` rows of `per_row` f16 values (`transposed`: stored dimension-major,
/// coded cell-major).
struct Coded {
    range: std::ops::Range<usize>,
    codec: Codec,
    per_row: usize,
    rows: usize,
    transposed: bool,
}

/// Encodes llama.cpp's state bytes of one chunk.
pub fn encode(state: &[u8]) -> Result<Vec<u8>, String> {
    let blob = seqstate::parse(state)?;
    let n = blob.cells();
    let base = state.as_ptr() as usize;
    let mut coded = Vec::new();
    for l in 0..blob.layers() {
        for (s, codec) in [(blob.k(l), Codec::Q8), (blob.v(l), Codec::Q6k)] {
            let start = s.data.as_ptr() as usize - base;
            let range = start..start + s.data.len();
            if s.ty != sys::GGML_TYPE_F16 as i32 || n == 0 {
                continue; // quantized by the cache already: verbatim
            }
            let (per_row, rows, transposed) = match s.layout {
                SectionLayout::Rows { row_bytes } => (row_bytes / 2, n, false),
                SectionLayout::Transposed { rows, .. } => (rows, n, true),
            };
            coded.push(Coded {
                range,
                codec,
                per_row,
                rows,
                transposed,
            });
        }
    }
    coded.sort_by_key(|c| c.range.start);
    let mut out = Vec::with_capacity(state.len() / 2);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(state.len() as u64).to_le_bytes());
    let count_at = out.len();
    out.extend_from_slice(&0u32.to_le_bytes());
    let mut segments = 0u32;
    let mut at = 0;
    let mut values = Vec::new();
    for c in &coded {
        segment(
            &mut out,
            Codec::Verbatim,
            false,
            0,
            0,
            &state[at..c.range.start],
        );
        segments += 1;
        f16_cell_major(&state[c.range.clone()], c, &mut values);
        let q = quantize(c.codec, &values)?;
        if q.len() < c.range.len() {
            segment_header(
                &mut out,
                c.codec,
                c.transposed,
                c.per_row,
                c.rows,
                c.range.len(),
                q.len(),
            );
            out.extend_from_slice(&q);
        } else {
            // A section too short to gain from whole blocks stays as it is.
            segment(
                &mut out,
                Codec::Verbatim,
                false,
                0,
                0,
                &state[c.range.clone()],
            );
        }
        segments += 1;
        at = c.range.end;
    }
    segment(&mut out, Codec::Verbatim, false, 0, 0, &state[at..]);
    segments += 1;
    out[count_at..count_at + 4].copy_from_slice(&segments.to_le_bytes());
    Ok(out)
}

/// Decodes [`encode`]'s output back into llama.cpp's state bytes.
///
/// This is on the path of every state read from disk, so it is one pass
/// per segment straight into the output (no intermediate f32 transpose or
/// byte-by-byte extend), with the segments of a large state spread over
/// the machine's cores: at 8K tokens of a Llama-3-8B-shaped model a state
/// decodes to 1 GB of f16, and the one-core decoder before this one ran at
/// 0.45 GB/s (2-core Xeon), while an H200 prefills those tokens in 0.77 s.
/// It runs while llama.cpp waits for the states, so the cores are free.
pub fn decode(data: &[u8]) -> Result<Vec<u8>, String> {
    decode_with(data, workers_for(data.len()))
}

/// Threads for decoding `encoded` bytes: one per ~2 MB of input (a thread
/// costs tens of microseconds), at most the cores and 8.
fn workers_for(encoded: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (encoded / (2 << 20)).clamp(1, cores.min(8))
}

/// [`decode`] on `workers` threads (1: on the caller's).
fn decode_with(data: &[u8], workers: usize) -> Result<Vec<u8>, String> {
    let mut r = Reader { data, at: 0 };
    if r.take(4)? != MAGIC {
        return Err("not a compact KV state".into());
    }
    let version = r.u32()?;
    if version != VERSION {
        return Err(format!(
            "compact KV state version {version}, this build reads {VERSION}"
        ));
    }
    let total = r.u64()? as usize;
    let count = r.u32()?;
    // Every header is checked before any output is allocated: a damaged
    // file cannot ask for more than its segments add up to.
    let mut segments = Vec::new();
    let mut end = 0usize;
    for _ in 0..count {
        let codec = Codec::from_u8(r.take(1)?[0]).ok_or("unknown compact codec")?;
        let transposed = r.take(1)?[0] != 0;
        r.take(2)?;
        let per_row = r.u32()? as usize;
        let rows = r.u32()? as usize;
        let len = r.u64()? as usize;
        let enc = r.u64()? as usize;
        let bytes = r.take(enc)?;
        end = end
            .checked_add(len)
            .filter(|&e| e <= total)
            .ok_or("a compact segment runs past the state")?;
        match codec.ggml() {
            None if len != enc => return Err("a verbatim segment of the wrong length".into()),
            None => {}
            Some(ty) => {
                let n = per_row.checked_mul(rows);
                if n.and_then(|v| v.checked_mul(2)) != Some(len) {
                    return Err("a coded segment of the wrong shape".into());
                }
                // What the values quantize to, so that a header cannot
                // claim more output than its bytes hold.
                let padded = n.unwrap_or(0).next_multiple_of(block(ty));
                // SAFETY: a row size query.
                if enc != unsafe { sys::ggml_row_size(ty, padded as i64) } {
                    return Err("a coded segment of the wrong size".into());
                }
            }
        }
        segments.push(Segment {
            codec,
            transposed,
            per_row,
            rows,
            bytes,
        });
    }
    if end != total || r.at != data.len() {
        return Err("compact KV state does not add up".into());
    }
    let mut out = vec![0u8; total];
    let mut parts = Vec::with_capacity(segments.len());
    let mut rest = out.as_mut_slice();
    for seg in &segments {
        let (here, tail) = rest.split_at_mut(seg.len());
        parts.push((seg, here));
        rest = tail;
    }
    let work = |parts: &mut [(&Segment<'_>, &mut [u8])]| -> Result<(), String> {
        let mut scratch = Scratch::default();
        parts
            .iter_mut()
            .try_for_each(|(seg, o)| seg.decode_into(o, &mut scratch))
    };
    if workers <= 1 || parts.len() < 2 {
        work(&mut parts)?;
        return Ok(out);
    }
    // K and V segments decode to the same size per layer and the verbatim
    // ones between them are small: equal counts are equal work.
    let per_thread = parts.len().div_ceil(workers);
    let groups = parts.chunks_mut(per_thread);
    std::thread::scope(|scope| {
        let handles: Vec<_> = groups.map(|g| scope.spawn(move || work(g))).collect();
        handles.into_iter().try_for_each(|h| {
            h.join()
                .map_err(|_| "a state decoding thread panicked".to_string())?
        })
    })?;
    Ok(out)
}

/// One segment of a compact state, its header checked.
struct Segment<'a> {
    codec: Codec,
    transposed: bool,
    per_row: usize,
    rows: usize,
    bytes: &'a [u8],
}

/// A decoding thread's reusable buffers.
#[derive(Default)]
struct Scratch {
    floats: Vec<f32>,
    halves: Vec<u16>,
    /// Transposed halves.
    moved: Vec<u16>,
}

impl Segment<'_> {
    /// Decoded bytes.
    fn len(&self) -> usize {
        match self.codec {
            Codec::Verbatim => self.bytes.len(),
            _ => self.per_row * self.rows * 2,
        }
    }

    /// Writes the decoded bytes into `out` (exactly [`Self::len`] bytes).
    fn decode_into(&self, out: &mut [u8], s: &mut Scratch) -> Result<(), String> {
        let Some(ty) = self.codec.ggml() else {
            out.copy_from_slice(self.bytes);
            return Ok(());
        };
        let n = self.per_row * self.rows;
        dequantize(ty, self.bytes, n, &mut s.floats)?;
        s.halves.clear();
        s.halves.resize(n, 0);
        // SAFETY: `floats` holds at least `n` values, `halves` exactly `n`.
        // (The CPU backend's conversion: F16C where the CPU has it, the
        // same round-to-nearest-even as ggml's portable one.)
        unsafe { sys::ggml_cpu_fp32_to_fp16(s.floats.as_ptr(), s.halves.as_mut_ptr(), n as i64) };
        let halves = if self.transposed {
            // Coded [cell][dim]; stored [dim][cell]: moved in tiles, so
            // that both sides stay in cache.
            let (dims, cells) = (self.per_row, self.rows);
            s.moved.clear();
            s.moved.resize(n, 0);
            const TILE: usize = 32;
            for c0 in (0..cells).step_by(TILE) {
                for d0 in (0..dims).step_by(TILE) {
                    let d1 = (d0 + TILE).min(dims);
                    for c in c0..(c0 + TILE).min(cells) {
                        let row = &s.halves[c * dims + d0..c * dims + d1];
                        for (d, &h) in (d0..d1).zip(row) {
                            s.moved[d * cells + c] = h;
                        }
                    }
                }
            }
            &s.moved
        } else {
            &s.halves
        };
        for (o, h) in out.chunks_exact_mut(2).zip(halves) {
            o.copy_from_slice(&h.to_le_bytes());
        }
        Ok(())
    }
}

fn segment(
    out: &mut Vec<u8>,
    codec: Codec,
    transposed: bool,
    per_row: usize,
    rows: usize,
    raw: &[u8],
) {
    segment_header(out, codec, transposed, per_row, rows, raw.len(), raw.len());
    out.extend_from_slice(raw);
}

fn segment_header(
    out: &mut Vec<u8>,
    codec: Codec,
    transposed: bool,
    per_row: usize,
    rows: usize,
    len: usize,
    enc: usize,
) {
    let start = out.len();
    out.push(codec as u8);
    out.push(u8::from(transposed));
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&(per_row as u32).to_le_bytes());
    out.extend_from_slice(&(rows as u32).to_le_bytes());
    out.extend_from_slice(&(len as u64).to_le_bytes());
    out.extend_from_slice(&(enc as u64).to_le_bytes());
    debug_assert_eq!(out.len() - start, SEGMENT_HEADER);
}

/// The section's f16 values as f32, cell-major: for a transposed section
/// (`per_row` dimensions × `rows` cells, dimension-major) each cell's
/// values become one row.
fn f16_cell_major(bytes: &[u8], c: &Coded, out: &mut Vec<f32>) {
    let halves: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect();
    out.clear();
    out.resize(halves.len(), 0.0);
    // SAFETY: both buffers hold `halves.len()` values.
    unsafe { sys::ggml_fp16_to_fp32_row(halves.as_ptr(), out.as_mut_ptr(), halves.len() as i64) };
    if c.transposed {
        // Stored [dim][cell]; code [cell][dim].
        let (dims, cells) = (c.per_row, c.rows);
        let stored = std::mem::take(out);
        out.resize(stored.len(), 0.0);
        for d in 0..dims {
            for cell in 0..cells {
                out[cell * dims + d] = stored[d * cells + cell];
            }
        }
    }
}

/// Block size of a codec's ggml type.
fn block(ty: sys::ggml_type) -> usize {
    // SAFETY: ggml's static type table.
    unsafe { (*sys::ggml_get_type_traits(ty)).blck_size as usize }
}

/// `values`, zero-padded to whole blocks, quantized.
fn quantize(codec: Codec, values: &[f32]) -> Result<Vec<u8>, String> {
    let ty = codec.ggml().ok_or("nothing to quantize")?;
    let blk = block(ty);
    let padded = values.len().next_multiple_of(blk);
    let mut src = values.to_vec();
    src.resize(padded, 0.0);
    // SAFETY: a row size query.
    let bytes = unsafe { sys::ggml_row_size(ty, padded as i64) };
    let mut dst = vec![0u8; bytes];
    // SAFETY: `src` holds `padded` values as whole rows of one block, `dst`
    // the bytes ggml says they quantize to; no importance matrix is needed
    // by q8_0 or q6_K.
    let written = unsafe {
        sys::ggml_quantize_chunk(
            ty,
            src.as_ptr(),
            dst.as_mut_ptr().cast(),
            0,
            (padded / blk) as i64,
            blk as i64,
            std::ptr::null(),
        )
    };
    if written != bytes {
        return Err(format!("ggml quantized {written} bytes, expected {bytes}"));
    }
    Ok(dst)
}

/// `n` values (and the padding after them) from quantized `bytes`.
fn dequantize(
    ty: sys::ggml_type,
    bytes: &[u8],
    n: usize,
    out: &mut Vec<f32>,
) -> Result<(), String> {
    let padded = n.next_multiple_of(block(ty));
    // SAFETY: a row size query.
    if bytes.len() != unsafe { sys::ggml_row_size(ty, padded as i64) } {
        return Err("a coded segment of the wrong size".into());
    }
    out.clear();
    out.resize(padded, 0.0);
    // SAFETY: ggml's static type table; `bytes` holds exactly `padded`
    // quantized values and `out` room for them.
    unsafe {
        let to_float = (*sys::ggml_get_type_traits(ty))
            .to_float
            .ok_or("no dequantizer")?;
        to_float(bytes.as_ptr().cast(), out.as_mut_ptr(), padded as i64);
    }
    Ok(())
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or("compact KV state ends early")?;
        let s = &self.data[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, String> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A state as llama.cpp writes it: `cells` cells, two layers, f16 K rows
    /// of 64 values, V transposed (64 rows of `cells` values) or not.
    fn state(cells: usize, v_trans: bool, seed: u32) -> Vec<u8> {
        state_of(cells, v_trans, seed, 2, 64)
    }

    /// [`state`] with `layers` layers of `width` values per cell.
    fn state_of(cells: usize, v_trans: bool, seed: u32, layers: u32, width: usize) -> Vec<u8> {
        let mut x = seed;
        let mut val = || {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            ((x >> 9) as f32 / (1u32 << 23) as f32 - 0.5) * 8.0
        };
        let half = |v: f32| {
            let mut h = [0u16];
            // SAFETY: one value each way.
            unsafe { sys::ggml_fp32_to_fp16_row(&v, h.as_mut_ptr(), 1) };
            h[0].to_le_bytes()
        };
        let mut b = 0xaf14_3cd8u32.to_le_bytes().to_vec();
        b.extend_from_slice(&0i32.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&(cells as u32).to_le_bytes());
        for c in 0..cells {
            b.extend_from_slice(&(40 + c as i32).to_le_bytes());
            b.extend_from_slice(&1u32.to_le_bytes());
            b.extend_from_slice(&0i32.to_le_bytes());
        }
        for f in [u32::from(v_trans), layers, 0, 0] {
            b.extend_from_slice(&f.to_le_bytes());
        }
        for _ in 0..layers {
            b.extend_from_slice(&(sys::GGML_TYPE_F16 as i32).to_le_bytes());
            b.extend_from_slice(&(2 * width as u64).to_le_bytes());
            for _ in 0..cells * width {
                b.extend_from_slice(&half(val()));
            }
        }
        for _ in 0..layers {
            b.extend_from_slice(&(sys::GGML_TYPE_F16 as i32).to_le_bytes());
            if v_trans {
                b.extend_from_slice(&2u32.to_le_bytes());
                b.extend_from_slice(&(width as u32).to_le_bytes());
            } else {
                b.extend_from_slice(&(2 * width as u64).to_le_bytes());
            }
            for _ in 0..cells * width {
                b.extend_from_slice(&half(val()));
            }
        }
        b
    }

    fn values(state: &[u8]) -> Vec<f32> {
        let blob = seqstate::parse(state).expect("parse");
        let mut out = Vec::new();
        for l in 0..blob.layers() {
            for s in [blob.k(l), blob.v(l)] {
                for h in s.data.chunks_exact(2) {
                    let mut f = [0f32];
                    let h = [u16::from_le_bytes([h[0], h[1]])];
                    // SAFETY: one value.
                    unsafe { sys::ggml_fp16_to_fp32_row(h.as_ptr(), f.as_mut_ptr(), 1) };
                    out.push(f[0]);
                }
            }
        }
        out
    }

    #[test]
    fn a_state_decodes_to_the_same_layout_with_values_close_to_the_original() {
        for v_trans in [true, false] {
            for cells in [1, 7, 37] {
                let s = state(cells, v_trans, cells as u32);
                let packed = encode(&s).expect("encode");
                assert!(packed.len() <= s.len() + 300, "never much bigger");
                if cells >= 37 {
                    assert!(
                        packed.len() * 100 < s.len() * 55,
                        "{} of {} bytes",
                        packed.len(),
                        s.len()
                    );
                }
                let back = decode(&packed).expect("decode");
                assert_eq!(back.len(), s.len());
                let (a, b) = (
                    seqstate::parse(&s).expect("a"),
                    seqstate::parse(&back).expect("b"),
                );
                assert_eq!(a.positions(), b.positions(), "cell metadata verbatim");
                // Values in [-4, 4]: q8_0 and q6_K keep them within 0.1.
                let (x, y) = (values(&s), values(&back));
                let worst = x
                    .iter()
                    .zip(&y)
                    .map(|(p, q)| (p - q).abs())
                    .fold(0.0, f32::max);
                assert!(worst < 0.1, "{cells} cells, v_trans {v_trans}: {worst}");
            }
        }
    }

    /// The decoder before it wrote into its output in place and in
    /// parallel (f32 transpose, then a row conversion, then a byte-wise
    /// extend): the reference the new one must match byte for byte.
    fn decode_before(data: &[u8]) -> Vec<u8> {
        let mut r = Reader { data, at: 0 };
        r.take(4).expect("magic");
        r.u32().expect("version");
        let total = r.u64().expect("total") as usize;
        let mut out = Vec::with_capacity(total);
        let mut floats = Vec::new();
        for _ in 0..r.u32().expect("count") {
            let codec = Codec::from_u8(r.take(1).expect("codec")[0]).expect("codec");
            let transposed = r.take(1).expect("t")[0] != 0;
            r.take(2).expect("pad");
            let per_row = r.u32().expect("per row") as usize;
            let rows = r.u32().expect("rows") as usize;
            r.u64().expect("len");
            let enc = r.u64().expect("enc") as usize;
            let bytes = r.take(enc).expect("bytes");
            let Some(ty) = codec.ggml() else {
                out.extend_from_slice(bytes);
                continue;
            };
            dequantize(ty, bytes, per_row * rows, &mut floats).expect("dequantize");
            let n = per_row * rows;
            let ordered: Vec<f32> = if transposed {
                let mut t = vec![0.0; n];
                for cell in 0..rows {
                    for d in 0..per_row {
                        t[d * rows + cell] = floats[cell * per_row + d];
                    }
                }
                t
            } else {
                floats[..n].to_vec()
            };
            let mut halves = vec![0u16; n];
            // SAFETY: both buffers hold `n` values.
            unsafe { sys::ggml_fp32_to_fp16_row(ordered.as_ptr(), halves.as_mut_ptr(), n as i64) };
            out.extend(halves.iter().flat_map(|h| h.to_le_bytes()));
        }
        out
    }

    #[test]
    fn decoding_in_place_on_any_number_of_threads_matches_the_old_decoder_byte_for_byte() {
        // 70 and 100 cells cross the transpose's 32-wide tiles unevenly.
        for v_trans in [true, false] {
            for cells in [1, 33, 70, 100] {
                let packed = encode(&state(cells, v_trans, 7 + cells as u32)).expect("encode");
                let want = decode_before(&packed);
                for workers in [1, 2, 3, 16] {
                    let got = decode_with(&packed, workers).expect("decode");
                    assert!(
                        got == want,
                        "{cells} cells, v_trans {v_trans}, {workers} threads: first difference at {:?}",
                        got.iter().zip(&want).position(|(a, b)| a != b)
                    );
                }
            }
        }
    }

    /// Not a test: decoding speed, the old decoder against the new one on
    /// one thread and on its threads, over 64 layers of 512-wide K and V
    /// for 512 cells (67 MB of f16, one 512-token chunk of a
    /// Llama-3-8B-shaped model); run with --ignored --nocapture.
    #[test]
    #[ignore = "a measurement, not a check: run with --ignored --nocapture"]
    fn decode_speed() {
        let packed = encode(&state_of(512, true, 1, 64, 512)).expect("encode");
        let out = decode_before(&packed).len() as f64;
        let time = |f: &dyn Fn() -> usize| {
            let t = std::time::Instant::now();
            let mut n = 0;
            for _ in 0..5 {
                n += f();
            }
            assert!(n > 0);
            t.elapsed().as_secs_f64() / 5.0
        };
        let before = time(&|| decode_before(&packed).len());
        let one = time(&|| decode_with(&packed, 1).expect("decode").len());
        let all = time(&|| decode(&packed).expect("decode").len());
        println!(
            "{:.0} MB of f16 from {:.0} MB: before {:.0} ms ({:.2} GB/s), one thread {:.0} ms ({:.2} GB/s), {} threads {:.0} ms ({:.2} GB/s)",
            out / 1e6,
            packed.len() as f64 / 1e6,
            before * 1e3,
            out / before / 1e9,
            one * 1e3,
            out / one / 1e9,
            workers_for(packed.len()),
            all * 1e3,
            out / all / 1e9
        );
    }

    #[test]
    fn a_header_claiming_more_than_its_bytes_hold_is_refused_before_any_allocation() {
        let mut packed = encode(&state(40, true, 3)).expect("encode");
        // Walk to the first coded segment (after the 20-byte file header).
        let u64_at =
            |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
        let mut at = 20;
        while packed[at] == Codec::Verbatim as u8 {
            at += SEGMENT_HEADER + u64_at(&packed, at + 20) as usize;
        }
        // A terabyte of rows, with the segment's and the state's lengths
        // made to agree: only the encoded size can tell.
        let per_row = u32::from_le_bytes(packed[at + 4..at + 8].try_into().expect("4")) as u64;
        let rows = 1u64 << 32 >> 1;
        let old_len = u64_at(&packed, at + 12);
        let new_len = per_row * rows * 2;
        let total = u64_at(&packed, 8) - old_len + new_len;
        packed[8..16].copy_from_slice(&total.to_le_bytes());
        packed[at + 8..at + 12].copy_from_slice(&(rows as u32).to_le_bytes());
        packed[at + 12..at + 20].copy_from_slice(&new_len.to_le_bytes());
        let err = decode(&packed).expect_err("refused");
        assert!(err.contains("wrong size"), "{err}");
    }

    #[test]
    fn damaged_compact_states_are_refused() {
        let packed = encode(&state(5, true, 1)).expect("encode");
        assert!(decode(&packed[..packed.len() - 1]).is_err());
        assert!(decode(b"APEX").is_err());
        let mut big = packed.clone();
        big[8] = 0xff; // the decoded length
        assert!(decode(&big).is_err());
    }
}
