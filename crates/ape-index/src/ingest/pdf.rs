//! PDF to text per page (pdf-extract, over lopdf), after a check that the
//! file's compressed streams do not inflate past a cap. lopdf inflates a
//! stream whole into memory, the object streams already while loading, so
//! a file of a megabyte whose streams inflate to gigabytes (a
//! decompression bomb) would take the process's memory before any reader
//! code of ours runs. The check inflates each Flate stream itself, in
//! 64 KiB steps into a scratch buffer that is thrown away, and stops at
//! the cap: memory stays flat whatever the file declares. Image streams
//! are left out (the text readers never inflate them, and a scan's
//! images may rightly be large); filters other than Flate are bounded by
//! the worker's memory cap ([`super::isolate`]).

use std::io::Read;

use flate2::read::ZlibDecoder;

use super::extracted::{Builder, Extracted};
use super::place::Unit;

/// What a file's Flate streams may inflate to: 50× the file (text and
/// font streams inflate 3–10×), at least 64 MiB, at most 1 GiB.
pub fn inflation_cap(file_bytes: usize) -> u64 {
    (file_bytes as u64)
        .saturating_mul(50)
        .clamp(64 << 20, 1 << 30)
}

/// The text of a PDF, a section per page.
pub fn to_text(bytes: &[u8]) -> Result<Extracted, String> {
    check_inflation(bytes, inflation_cap(bytes.len()))?;
    // pdf-extract can panic on malformed files; a bad file must not abort the run.
    let encrypted = || declares_encryption(bytes);
    let pages = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem_by_pages(bytes))
        .map_err(|_| unreadable_pdf(encrypted(), "unreadable PDF".into()))?
        .map_err(|e| unreadable_pdf(encrypted(), format!("unreadable PDF: {e}")))?;
    let mut b = Builder::default();
    for (i, page) in pages.iter().enumerate() {
        b.section(Unit::Page, i + 1, None, None);
        let page = page.trim_matches('\n');
        b.line(page);
        b.blank();
    }
    if b.is_empty() {
        return Err(if encrypted() {
            "encrypted PDF (password-protected; no readable text)".into()
        } else {
            "PDF has no extractable text (scanned?)".into()
        });
    }
    b.finish_nonempty("PDF")
}

/// `Err` when the Flate streams of `pdf` (images aside) inflate to more
/// than `cap` bytes in all.
pub fn check_inflation(pdf: &[u8], cap: u64) -> Result<(), String> {
    let mut total = 0u64;
    let mut scratch = vec![0u8; 64 << 10];
    for s in streams(pdf) {
        let levels = count(s.dict, b"FlateDecode").min(4);
        if levels == 0 || is_image(s.dict) {
            continue;
        }
        // [/FlateDecode /FlateDecode]: inflated twice, counted once at
        // the innermost level.
        let mut reader: Box<dyn Read + '_> = Box::new(ZlibDecoder::new(s.data));
        for _ in 1..levels {
            reader = Box::new(ZlibDecoder::new(reader));
        }
        loop {
            match reader.read(&mut scratch) {
                Ok(0) | Err(_) => break, // the end, or damage lopdf handles
                Ok(n) => {
                    total += n as u64;
                    if total > cap {
                        return Err(format!(
                            "PDF streams inflate to more than {} (a decompression bomb?): not read",
                            crate::engine::memory::gb(cap)
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// One `<< … >> stream … endstream` of a PDF, found by scanning its bytes
/// (the file is not trusted enough to be parsed first).
struct RawStream<'a> {
    /// The object's text before `stream`: its dictionary.
    dict: &'a [u8],
    data: &'a [u8],
}

/// The streams of `pdf`, in file order.
fn streams(pdf: &[u8]) -> impl Iterator<Item = RawStream<'_>> {
    let mut at = 0;
    std::iter::from_fn(move || loop {
        let k = at + find(&pdf[at..], b"stream")?;
        at = k + 6;
        // `endstream` contains `stream`; a keyword starts after `>>`.
        let before = trim_end(&pdf[..k]);
        if !before.ends_with(b">>") {
            continue;
        }
        let data_start = match &pdf[at..] {
            [b'\r', b'\n', ..] => at + 2,
            [b'\n', ..] | [b'\r', ..] => at + 1,
            _ => continue,
        };
        let end =
            data_start + find(&pdf[data_start..], b"endstream").unwrap_or(pdf.len() - data_start);
        // The dictionary: back to the object's `obj` keyword, within 64 KiB.
        let from = k.saturating_sub(64 << 10);
        let dict_start = rfind(&pdf[from..k], b"obj").map_or(from, |i| from + i + 3);
        at = end;
        return Some(RawStream {
            dict: &pdf[dict_start..k],
            data: &pdf[data_start..end],
        });
    })
}

/// An image XObject: `/Subtype /Image`.
fn is_image(dict: &[u8]) -> bool {
    let mut rest = dict;
    while let Some(i) = find(rest, b"/Subtype") {
        let after = trim_start(&rest[i + 8..]);
        if after.starts_with(b"/Image") && !after.get(6).is_some_and(|c| c.is_ascii_alphanumeric())
        {
            return true;
        }
        rest = &rest[i + 8..];
    }
    false
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

fn count(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

fn trim_end(b: &[u8]) -> &[u8] {
    let n = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    &b[..n]
}

fn trim_start(b: &[u8]) -> &[u8] {
    let n = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    &b[n..]
}

/// Whether a PDF declares encryption (`/Encrypt` in its trailer).
fn declares_encryption(bytes: &[u8]) -> bool {
    bytes.windows(8).any(|w| w == b"/Encrypt")
}

fn unreadable_pdf(encrypted: bool, reason: String) -> String {
    if encrypted {
        "encrypted PDF (password-protected)".into()
    } else {
        reason
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).expect("compress");
        e.finish().expect("compress")
    }

    /// A PDF with the given stream objects (dictionary, compressed data),
    /// enough for the scanner (no page tree: it is never parsed).
    pub(crate) fn pdf_with(streams: &[(&str, &[u8])]) -> Vec<u8> {
        let mut pdf = b"%PDF-1.7\n".to_vec();
        for (i, (dict, data)) in streams.iter().enumerate() {
            write!(
                pdf,
                "{} 0 obj\n<< {dict} /Length {} >>\nstream\n",
                i + 1,
                data.len()
            )
            .expect("write");
            pdf.extend_from_slice(data);
            pdf.extend_from_slice(b"\nendstream\nendobj\n");
        }
        pdf.extend_from_slice(b"trailer << >>\n%%EOF\n");
        pdf
    }

    /// A real one-page PDF with a compressed content stream (a fuzz seed).
    pub(crate) fn small_pdf() -> Vec<u8> {
        let content = zlib(b"BT /F1 12 Tf 72 720 Td (Tide tables for March) Tj ET");
        let objects: Vec<Vec<u8>> = vec![
            b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
            b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>".to_vec(),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>".to_vec(),
            [
                format!("<< /Length {} /Filter /FlateDecode >>\nstream\n", content.len()).into_bytes(),
                content,
                b"\nendstream".to_vec(),
            ]
            .concat(),
        ];
        let mut out = b"%PDF-1.4\n".to_vec();
        let mut offsets = Vec::new();
        for (i, o) in objects.iter().enumerate() {
            offsets.push(out.len());
            writeln!(out, "{} 0 obj", i + 1).expect("write");
            out.extend_from_slice(o);
            out.extend_from_slice(b"\nendobj\n");
        }
        let xref = out.len();
        write!(out, "xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).expect("write");
        for off in offsets {
            writeln!(out, "{off:010} 00000 n ").expect("write");
        }
        write!(
            out,
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .expect("write");
        out
    }

    #[test]
    fn a_small_pdf_reads_after_the_check() {
        let x = to_text(&small_pdf()).expect("readable");
        assert!(x.text.contains("Tide tables for March"), "{}", x.text);
    }

    /// A bomb: 32 streams of 8 MiB of zeros each (256 MiB inflated) in a
    /// file of about 250 KB, over a 64 MiB cap. Memory stays flat: the
    /// scratch buffer is all the check holds.
    #[test]
    fn a_decompression_bomb_is_refused_before_any_parse() {
        let block = zlib(&vec![0u8; 8 << 20]);
        let streams: Vec<(&str, &[u8])> = (0..32)
            .map(|_| ("/Filter /FlateDecode", &block[..]))
            .collect();
        let pdf = pdf_with(&streams);
        assert!(pdf.len() < 400_000, "{} bytes", pdf.len());
        let e = check_inflation(&pdf, 64 << 20).expect_err("a bomb");
        assert!(e.contains("decompression bomb"), "{e}");
        // The reader says the same, with its own cap.
        let e = to_text(&pdf).expect_err("a bomb");
        assert!(e.contains("more than 67 MB"), "{e}");
    }

    #[test]
    fn doubly_compressed_streams_are_counted_inflated() {
        let twice = zlib(&zlib(&vec![b'x'; 4 << 20]));
        let pdf = pdf_with(&[("/Filter [/FlateDecode /FlateDecode]", &twice)]);
        assert!(check_inflation(&pdf, 4 << 20).is_ok());
        assert!(check_inflation(&pdf, (4 << 20) - 1).is_err());
        // Counted once inflated it is only the inner stream's size.
        let once = pdf_with(&[("/Filter /FlateDecode", &twice)]);
        assert!(check_inflation(&once, 1 << 20).is_ok());
    }

    #[test]
    fn images_and_other_filters_are_not_counted() {
        let big = zlib(&vec![0u8; 8 << 20]);
        let pdf = pdf_with(&[
            (
                "/Type /XObject /Subtype /Image /Width 4096 /Filter /FlateDecode",
                &big,
            ),
            ("/Filter /DCTDecode", b"\xff\xd8 jpeg bytes"),
            ("/Filter /FlateDecode", &zlib(b"BT (Hello) Tj ET")),
        ]);
        assert!(check_inflation(&pdf, 1 << 20).is_ok());
        assert!(is_image(b"/Subtype/Image"));
        assert!(!is_image(b"/Subtype /ImageMask"));
    }
}
