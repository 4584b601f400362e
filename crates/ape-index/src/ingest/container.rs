//! Zip containers (OOXML, ODF, EPUB) opened defensively: a small file must
//! not inflate into gigabytes, and a password-protected document must be
//! named as such rather than reported as garbage.
//!
//! Every entry's declared size is checked against the limits before
//! anything is inflated; zip itself stops any read one byte past an entry's
//! declared size (for our reads and calamine's alike), so an entry that
//! lies about its size is caught at the limit, not after it has filled
//! memory.

use std::io::{Cursor, Read};

/// Entries an archive may hold (a real document has tens to hundreds).
pub const MAX_ENTRIES: usize = 10_000;
/// Inflated bytes an archive may hold in all.
pub const MAX_INFLATED: u64 = 256 << 20;
/// Largest inflate ratio allowed for an entry bigger than [`RATIO_FREE`]
/// (text XML inflates 5–30×; deflate can reach ~1000× on repeated bytes).
pub const MAX_RATIO: u64 = 200;
/// Entries this small may have any ratio: a tiny file can be all spaces.
const RATIO_FREE: u64 = 1 << 20;

/// The compound-file (OLE2) signature: how Office stores an encrypted
/// OOXML document (an `EncryptedPackage` stream instead of a zip).
const CFB_MAGIC: [u8; 8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];

/// A zip archive whose entries have passed the size checks.
pub struct Archive<'a> {
    zip: zip::ZipArchive<Cursor<&'a [u8]>>,
    /// Format name for error messages ("DOCX", "EPUB", …).
    what: &'static str,
}

impl<'a> Archive<'a> {
    /// Opens `bytes` as the zip container of a `what` document, refusing
    /// encrypted documents, truncated archives and zip bombs with a reason.
    pub fn open(bytes: &'a [u8], what: &'static str) -> Result<Self, String> {
        if bytes.starts_with(&CFB_MAGIC) {
            return Err(format!(
                "encrypted {what} (password-protected; save it without a password to index it)"
            ));
        }
        let mut zip = zip::ZipArchive::new(Cursor::new(bytes))
            .map_err(|e| format!("unreadable {what} (damaged or truncated archive: {e})"))?;
        if zip.len() > MAX_ENTRIES {
            return Err(format!(
                "{what} refused: {} archive entries (limit {MAX_ENTRIES})",
                zip.len()
            ));
        }
        let mut total = 0u64;
        for i in 0..zip.len() {
            let f = zip
                .by_index_raw(i)
                .map_err(|e| format!("unreadable {what} (damaged archive: {e})"))?;
            if f.encrypted() {
                return Err(format!("encrypted {what} (password-protected entries)"));
            }
            let (size, packed) = (f.size(), f.compressed_size().max(1));
            if size > RATIO_FREE && size / packed > MAX_RATIO {
                return Err(bomb(what, size));
            }
            total = total.saturating_add(size);
            if total > MAX_INFLATED {
                return Err(bomb(what, total));
            }
        }
        Ok(Self { zip, what })
    }

    /// Whether an entry named `name` exists.
    pub fn has(&self, name: &str) -> bool {
        self.zip.index_for_name(name).is_some()
    }

    /// The bytes of entry `name`, inflated within its declared size.
    pub fn bytes(&mut self, name: &str) -> Result<Vec<u8>, String> {
        let what = self.what;
        let mut f = self
            .zip
            .by_name(name)
            .map_err(|_| format!("unreadable {what}: no {name}"))?;
        let mut out = Vec::with_capacity(f.size().min(MAX_INFLATED) as usize);
        f.read_to_end(&mut out)
            .map_err(|e| read_error(what, name, &e.to_string()))?;
        Ok(out)
    }

    /// Inflates every entry once, discarding the bytes: an entry that lies
    /// about its size is named as a bomb before a reader we do not control
    /// (calamine) opens the archive, even one it would never read.
    pub fn verify_all(&mut self) -> Result<(), String> {
        let what = self.what;
        for i in 0..self.zip.len() {
            let mut f = self
                .zip
                .by_index(i)
                .map_err(|e| format!("unreadable {what} (damaged archive: {e})"))?;
            let name = f.name().map(|n| n.into_owned()).unwrap_or_default();
            std::io::copy(&mut f, &mut std::io::sink())
                .map_err(|e| read_error(what, &name, &e.to_string()))?;
        }
        Ok(())
    }

    /// Entry `name` as UTF-8 text (a byte-order mark dropped).
    pub fn text(&mut self, name: &str) -> Result<String, String> {
        let bytes = self.bytes(name)?;
        let what = self.what;
        let text = String::from_utf8(bytes)
            .map_err(|_| format!("unreadable {what}: {name} is not UTF-8"))?;
        Ok(match text.strip_prefix('\u{feff}') {
            Some(t) => t.to_string(),
            None => text,
        })
    }
}

/// The reason for a failed read of entry `name`: an entry inflating past
/// its declared size, which zip stops one byte past, is named as the bomb
/// it is.
fn read_error(what: &str, name: &str, e: &str) -> String {
    if e.contains("declared uncompressed size") {
        format!("{what} refused: {name} inflates past its declared size (zip bomb?)")
    } else {
        format!("unreadable {what} (damaged or truncated {name}: {e})")
    }
}

fn bomb(what: &str, bytes: u64) -> String {
    format!(
        "{what} refused: inflates to {} MiB (limits: {} MiB in all, {MAX_RATIO}:1 per entry; zip bomb?)",
        bytes >> 20,
        MAX_INFLATED >> 20
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    /// A zip of `(name, content)` entries, deflated.
    pub fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut buf = Cursor::new(Vec::new());
        let mut z = zip::ZipWriter::new(&mut buf);
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, content) in entries {
            z.start_file(*name, opts).expect("zip");
            z.write_all(content).expect("zip");
        }
        z.finish().expect("zip");
        buf.into_inner()
    }

    #[test]
    fn refuses_bombs_truncation_and_encryption_with_reasons() {
        let ok = zip_of(&[("a.xml", b"<a>hi</a>")]);
        let mut a = Archive::open(&ok, "DOCX").expect("open");
        assert_eq!(a.text("a.xml").expect("text"), "<a>hi</a>");
        assert!(a.text("b.xml").unwrap_err().contains("no b.xml"));

        let zeros = vec![0u8; 64 << 20];
        let bomb = zip_of(&[("big.xml", &zeros)]);
        assert!(bomb.len() < 1 << 20, "deflated {}", bomb.len());
        let err = Archive::open(&bomb, "XLSX").err().expect("bomb refused");
        assert!(err.contains("zip bomb"), "{err}");

        let cut = &ok[..ok.len() - 10];
        let err = Archive::open(cut, "XLSX").err().expect("truncated refused");
        assert!(err.contains("truncated"), "{err}");

        let mut cfb = CFB_MAGIC.to_vec();
        cfb.extend_from_slice(&[0; 504]);
        let err = Archive::open(&cfb, "DOCX")
            .err()
            .expect("encrypted refused");
        assert!(err.starts_with("encrypted DOCX"), "{err}");
    }

    #[test]
    fn an_entry_that_lies_about_its_size_is_stopped_at_the_lie() {
        let zeros = vec![0u8; 4 << 20];
        let mut bytes = zip_of(&[("x.xml", &zeros)]);
        // Rewrite the declared size (local header and central directory)
        // to 1 KiB: the entry passes `open`, and reading must stop there.
        let real = (zeros.len() as u32).to_le_bytes();
        let fake = 1024u32.to_le_bytes();
        let mut patched = 0;
        for i in 0..bytes.len().saturating_sub(4) {
            if bytes[i..i + 4] == real {
                bytes[i..i + 4].copy_from_slice(&fake);
                patched += 1;
            }
        }
        assert_eq!(patched, 2, "local header and central directory");
        let mut a = Archive::open(&bytes, "ODT").expect("declared sizes look fine");
        let err = a.bytes("x.xml").unwrap_err();
        assert!(err.contains("declared size"), "{err}");
        let err = a.verify_all().unwrap_err();
        assert!(err.contains("declared size"), "{err}");
    }
}
