//! llama.cpp's sequence-state blobs, concatenated so that the shared prefix
//! and every chunk are restored in one call.
//!
//! Restoring a blob costs llama.cpp one tensor copy per V row per layer
//! whatever its size (V is stored transposed while flash attention is off),
//! which on a GPU is one host-to-device copy each: about 0.26 s per blob on
//! an 8B model, so 16 chunks restored one by one took 5.8 s where the data
//! itself moves in milliseconds. One blob holding the prefix and all chunks
//! pays that once. The cells land exactly where restoring the parts one
//! after another put them (prefix first, then the chunks in order), so the
//! assembled cache is the same bit for bit.
//!
//! The layout read here is the one `llama_kv_cache::state_write` of the
//! pinned llama.cpp writes for one sequence of a unified cache:
//!
//! ```text
//! u32 magic · i32 seq · u32 n_stream (1) · u32 cells · cells × (i32 pos, u32 n_seq, n_seq × i32 seq)
//! u32 v_trans · u32 n_layer · u32 n_rot_k · u32 n_rot_v
//! n_layer × (i32 type, u64 row bytes, cells × row)                  K
//! v_trans: n_layer × (i32 type, u32 elem bytes, u32 rows, rows × cells × elem)
//! else:    n_layer × (i32 type, u64 row bytes, cells × row)                  V
//! ```
//!
//! Anything else (another stream count, per-cell extensions, mismatched
//! layers) is refused with an error rather than guessed at.

/// `llama_context`'s sequence-state magic, written before the cache's part.
const MAGIC: u32 = 0xaf14_3cd8;

/// One parsed blob: the cell metadata and each layer's K and V sections.
pub(crate) struct Blob<'a> {
    /// Magic and source sequence, verbatim.
    start: &'a [u8],
    cells: usize,
    meta: &'a [u8],
    /// `v_trans`, `n_layer`, `n_rot_k`, `n_rot_v`, verbatim.
    head: &'a [u8],
    v_trans: bool,
    /// Per layer: the section header (type and sizes) and its data.
    k: Vec<(&'a [u8], &'a [u8])>,
    v: Vec<(&'a [u8], &'a [u8])>,
    /// Per layer, for transposed V: rows (elements per cell) and element size.
    v_rows: Vec<(usize, usize)>,
}

/// One layer's K or V data in a blob, as the cache stores it: `cells` rows
/// of `row_bytes`, or, for transposed V, `rows` rows of `cells` elements of
/// `elem_bytes` each.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Section<'a> {
    /// ggml type.
    pub ty: i32,
    pub layout: SectionLayout,
    pub data: &'a [u8],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SectionLayout {
    /// One row of `row_bytes` per cell.
    Rows { row_bytes: usize },
    /// `rows` rows (one per embedding element) of one element per cell.
    Transposed { rows: usize, elem_bytes: usize },
}

impl<'a> Blob<'a> {
    /// Cells (tokens) the blob holds.
    pub fn cells(&self) -> usize {
        self.cells
    }

    /// Each cell's position, in cell order.
    pub fn positions(&self) -> Vec<i32> {
        // Every cell is (i32 pos, u32 n_seq = 1, i32 seq): checked by parse.
        self.meta
            .chunks_exact(12)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    /// Layers the blob holds.
    pub fn layers(&self) -> usize {
        self.k.len()
    }

    /// Whether V is stored transposed.
    pub fn v_trans(&self) -> bool {
        self.v_trans
    }

    /// Layer `l`'s K section.
    pub fn k(&self, l: usize) -> Section<'a> {
        let (h, data) = self.k[l];
        Section {
            ty: i32_at(h, 0),
            layout: SectionLayout::Rows {
                row_bytes: u64_at(h, 4) as usize,
            },
            data,
        }
    }

    /// Layer `l`'s V section.
    pub fn v(&self, l: usize) -> Section<'a> {
        let (h, data) = self.v[l];
        let layout = if self.v_trans {
            let (rows, elem_bytes) = self.v_rows[l];
            SectionLayout::Transposed { rows, elem_bytes }
        } else {
            SectionLayout::Rows {
                row_bytes: u64_at(h, 4) as usize,
            }
        };
        Section {
            ty: i32_at(h, 0),
            layout,
            data,
        }
    }
}

fn i32_at(b: &[u8], o: usize) -> i32 {
    i32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

fn u64_at(b: &[u8], o: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[o..o + 8]);
    u64::from_le_bytes(a)
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.data.len());
        let end =
            end.ok_or_else(|| format!("state blob ends early (need {n} bytes at {})", self.at))?;
        let s = &self.data[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, String> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
}

/// Parses one sequence-state blob, refusing any layout but the one above.
pub(crate) fn parse(data: &[u8]) -> Result<Blob<'_>, String> {
    let mut r = Reader { data, at: 0 };
    if r.u32()? != MAGIC {
        return Err("not a llama.cpp sequence state".into());
    }
    r.take(4)?;
    let start = &data[..8];
    let streams = r.u32()?;
    if streams != 1 {
        return Err(format!("{streams} KV streams (expected one unified cache)"));
    }
    let cells = r.u32()? as usize;
    let meta_start = r.at;
    for _ in 0..cells {
        r.take(4)?; // position
        let n_seq = r.u32()? as usize;
        if n_seq != 1 {
            return Err(format!("a cell in {n_seq} sequences (expected one)"));
        }
        r.take(4 * n_seq)?;
    }
    let meta = &data[meta_start..r.at];
    let head = r.take(16)?;
    let field = |i: usize| {
        u32::from_le_bytes([
            head[4 * i],
            head[4 * i + 1],
            head[4 * i + 2],
            head[4 * i + 3],
        ])
    };
    let (v_trans, n_layer) = (field(0) != 0, field(1) as usize);
    let mut k = Vec::with_capacity(n_layer);
    for _ in 0..n_layer {
        let start = r.at;
        r.take(4)?;
        let row = r.u64()? as usize;
        let h = &data[start..r.at];
        k.push((
            h,
            r.take(row.checked_mul(cells).ok_or("K section too large")?)?,
        ));
    }
    let (mut v, mut v_rows) = (Vec::with_capacity(n_layer), Vec::new());
    for _ in 0..n_layer {
        let start = r.at;
        r.take(4)?;
        let bytes = if v_trans {
            let elem = r.u32()? as usize;
            let rows = r.u32()? as usize;
            v_rows.push((rows, elem));
            rows * cells * elem
        } else {
            r.u64()? as usize * cells
        };
        let h = &data[start..r.at];
        v.push((h, r.take(bytes)?));
    }
    if r.at != data.len() {
        return Err(format!(
            "{} unexpected bytes after the V sections (per-cell extensions?)",
            data.len() - r.at
        ));
    }
    Ok(Blob {
        start,
        cells,
        meta,
        head,
        v_trans,
        k,
        v,
        v_rows,
    })
}

/// Several blobs, checked to come from the same cache, ready to be written
/// out as one.
pub(crate) struct Concat<'a> {
    blobs: Vec<Blob<'a>>,
    len: usize,
}

/// Plans one blob holding the cells of every part, in order: restoring it
/// puts each part's cells where restoring the parts one after another would.
pub(crate) fn plan<'a>(parts: &[&'a [u8]]) -> Result<Concat<'a>, String> {
    let blobs = parts
        .iter()
        .map(|p| parse(p))
        .collect::<Result<Vec<_>, _>>()?;
    let Some(first) = blobs.first() else {
        return Err("nothing to concatenate".into());
    };
    for b in &blobs[1..] {
        let same_sections = b.k.iter().zip(&first.k).all(|(x, y)| x.0 == y.0)
            && b.v.iter().zip(&first.v).all(|(x, y)| x.0 == y.0);
        if b.head != first.head || b.k.len() != first.k.len() || !same_sections {
            return Err("state blobs come from differently shaped caches".into());
        }
    }
    // Every part's bytes minus the headers that appear once.
    let once = 8 + 8 + first.head.len();
    let per_layer: usize = first.k.iter().chain(&first.v).map(|s| s.0.len()).sum();
    let len = parts.iter().map(|p| p.len()).sum::<usize>() - (blobs.len() - 1) * (once + per_layer);
    Ok(Concat { blobs, len })
}

impl Concat<'_> {
    /// Bytes of the concatenated blob.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Writes the blob into `out`, which must be [`Self::len`] bytes.
    pub fn write(&self, out: &mut [u8]) {
        let mut w = Writer { out, at: 0 };
        let (blobs, first) = (&self.blobs, &self.blobs[0]);
        let cells: usize = blobs.iter().map(|b| b.cells).sum();
        w.put(first.start);
        w.put(&1u32.to_le_bytes());
        w.put(&(cells as u32).to_le_bytes());
        blobs.iter().for_each(|b| w.put(b.meta));
        w.put(first.head);
        for l in 0..first.k.len() {
            w.put(first.k[l].0);
            blobs.iter().for_each(|b| w.put(b.k[l].1));
        }
        for l in 0..first.v.len() {
            w.put(first.v[l].0);
            if first.v_trans {
                // Row j of the merged section is row j of every part, in order.
                let (rows, elem) = first.v_rows[l];
                for j in 0..rows {
                    for b in blobs {
                        let n = b.cells * elem;
                        w.put(&b.v[l].1[j * n..(j + 1) * n]);
                    }
                }
            } else {
                blobs.iter().for_each(|b| w.put(b.v[l].1));
            }
        }
        debug_assert_eq!(w.at, w.out.len());
    }
}

struct Writer<'o> {
    out: &'o mut [u8],
    at: usize,
}

impl Writer<'_> {
    fn put(&mut self, b: &[u8]) {
        self.out[self.at..self.at + b.len()].copy_from_slice(b);
        self.at += b.len();
    }
}

#[cfg(test)]
fn concat(parts: &[&[u8]]) -> Result<Vec<u8>, String> {
    let plan = plan(parts)?;
    let mut out = vec![0u8; plan.len()];
    plan.write(&mut out);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start() -> Vec<u8> {
        let mut b = MAGIC.to_le_bytes().to_vec();
        b.extend_from_slice(&0i32.to_le_bytes());
        b
    }

    /// A blob as llama.cpp writes it: `cells` at positions `pos0..`, two
    /// layers, K rows of 4 bytes, transposed V of 3 rows × 2-byte elements.
    /// Every data byte encodes (part, layer, row/cell) so misplacement shows.
    fn blob(part: u8, pos0: i32, cells: usize, v_trans: bool) -> Vec<u8> {
        let mut b = start();
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&(cells as u32).to_le_bytes());
        for c in 0..cells {
            b.extend_from_slice(&(pos0 + c as i32).to_le_bytes());
            b.extend_from_slice(&1u32.to_le_bytes());
            b.extend_from_slice(&1i32.to_le_bytes());
        }
        for f in [u32::from(v_trans), 2, 64, 64] {
            b.extend_from_slice(&f.to_le_bytes());
        }
        for l in 0..2u8 {
            b.extend_from_slice(&1i32.to_le_bytes());
            b.extend_from_slice(&4u64.to_le_bytes());
            for c in 0..cells {
                b.extend_from_slice(&[part, l, c as u8, 0xAA]);
            }
        }
        for l in 0..2u8 {
            b.extend_from_slice(&1i32.to_le_bytes());
            if v_trans {
                b.extend_from_slice(&2u32.to_le_bytes());
                b.extend_from_slice(&3u32.to_le_bytes());
                for j in 0..3u8 {
                    for c in 0..cells {
                        b.extend_from_slice(&[part * 16 + l, j * 16 + c as u8]);
                    }
                }
            } else {
                b.extend_from_slice(&6u64.to_le_bytes());
                for c in 0..cells {
                    b.extend_from_slice(&[part, l, c as u8, 1, 2, 3]);
                }
            }
        }
        b
    }

    /// The blob that holding every part's cells would produce directly.
    fn merged_by_hand(parts: &[(u8, i32, usize)], v_trans: bool) -> Vec<u8> {
        let whole: usize = parts.iter().map(|p| p.2).sum();
        let mut b = start();
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&(whole as u32).to_le_bytes());
        for &(_, pos0, cells) in parts {
            for c in 0..cells {
                b.extend_from_slice(&(pos0 + c as i32).to_le_bytes());
                b.extend_from_slice(&1u32.to_le_bytes());
                b.extend_from_slice(&1i32.to_le_bytes());
            }
        }
        for f in [u32::from(v_trans), 2, 64, 64] {
            b.extend_from_slice(&f.to_le_bytes());
        }
        for l in 0..2u8 {
            b.extend_from_slice(&1i32.to_le_bytes());
            b.extend_from_slice(&4u64.to_le_bytes());
            for &(part, _, cells) in parts {
                for c in 0..cells {
                    b.extend_from_slice(&[part, l, c as u8, 0xAA]);
                }
            }
        }
        for l in 0..2u8 {
            b.extend_from_slice(&1i32.to_le_bytes());
            if v_trans {
                b.extend_from_slice(&2u32.to_le_bytes());
                b.extend_from_slice(&3u32.to_le_bytes());
                for j in 0..3u8 {
                    for &(part, _, cells) in parts {
                        for c in 0..cells {
                            b.extend_from_slice(&[part * 16 + l, j * 16 + c as u8]);
                        }
                    }
                }
            } else {
                b.extend_from_slice(&6u64.to_le_bytes());
                for &(part, _, cells) in parts {
                    for c in 0..cells {
                        b.extend_from_slice(&[part, l, c as u8, 1, 2, 3]);
                    }
                }
            }
        }
        b
    }

    #[test]
    fn concatenation_equals_one_blob_of_all_cells() {
        let parts = [(0u8, 0, 3), (1, 3, 2), (2, 3, 4)];
        for v_trans in [true, false] {
            let blobs: Vec<Vec<u8>> = parts
                .iter()
                .map(|&(p, s, n)| blob(p, s, n, v_trans))
                .collect();
            let refs: Vec<&[u8]> = blobs.iter().map(|b| b.as_slice()).collect();
            assert_eq!(
                concat(&refs).expect("concat"),
                merged_by_hand(&parts, v_trans)
            );
            assert_eq!(concat(&refs[..1]).expect("one part"), blobs[0]);
        }
    }

    #[test]
    fn unexpected_layouts_are_refused() {
        let good = blob(0, 0, 2, true);
        assert!(concat(&[&good[..good.len() - 1]])
            .unwrap_err()
            .contains("ends early"));
        let mut extra = good.clone();
        extra.push(0);
        assert!(concat(&[&extra]).unwrap_err().contains("unexpected bytes"));
        let mut two_streams = good.clone();
        two_streams[8] = 2;
        assert!(concat(&[&two_streams])
            .unwrap_err()
            .contains("2 KV streams"));
        assert!(concat(&[&good[4..]])
            .unwrap_err()
            .contains("not a llama.cpp"));
        let other = blob(1, 2, 2, false);
        assert!(concat(&[&good, &other])
            .unwrap_err()
            .contains("differently shaped"));
    }
}
