//! Reading a folder's text files. A bad file never aborts the run: it is
//! skipped with a reason the caller reports.

use std::path::{Path, PathBuf};

/// Files larger than this are skipped (they are rarely prose worth encoding).
pub const MAX_FILE_BYTES: u64 = 4 << 20;

const TEXT_EXTENSIONS: &[&str] = &[
    "md", "markdown", "txt", "text", "rst", "adoc", "org", "rs", "py", "js", "ts", "go", "c", "h",
    "cpp", "hpp", "java", "kt", "rb", "sh", "toml", "yaml", "yml", "json", "csv", "sql",
];

/// A readable UTF-8 text file, path relative to the folder.
#[derive(Clone, Debug)]
pub struct Document {
    pub path: PathBuf,
    pub text: String,
}

/// A file that was not read, and why.
#[derive(Clone, Debug)]
pub struct Skipped {
    pub path: PathBuf,
    pub reason: String,
}

/// Reads every text file under `root` (hidden entries skipped, symlinks not
/// followed), sorted by path.
pub fn read_folder(root: &Path) -> std::io::Result<(Vec<Document>, Vec<Skipped>)> {
    let (mut docs, mut skipped) = (Vec::new(), Vec::new());
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if dir == root => return Err(e),
            Err(e) => {
                skipped.push(Skipped {
                    path: rel(root, &dir),
                    reason: e.to_string(),
                });
                continue;
            }
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(t) if t.is_file() => match read_text(&path) {
                    Ok(Some(text)) => docs.push(Document {
                        path: rel(root, &path),
                        text,
                    }),
                    Ok(None) => {}
                    Err(reason) => skipped.push(Skipped {
                        path: rel(root, &path),
                        reason,
                    }),
                },
                _ => {} // symlinks and special files are not followed
            }
        }
    }
    docs.sort_by(|a, b| a.path.cmp(&b.path));
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((docs, skipped))
}

fn rel(root: &Path, p: &Path) -> PathBuf {
    p.strip_prefix(root).unwrap_or(p).to_path_buf()
}

/// `Ok(None)`: not a text file we index. `Err`: a text file we cannot use.
fn read_text(path: &Path) -> Result<Option<String>, String> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if !ext.is_some_and(|e| TEXT_EXTENSIONS.contains(&e.as_str())) {
        return Ok(None);
    }
    let len = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
    if len > MAX_FILE_BYTES {
        return Err(format!("larger than {} MiB", MAX_FILE_BYTES >> 20));
    }
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    if bytes.contains(&0) {
        return Err("binary content".into());
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|e| format!("invalid UTF-8 at byte {}", e.utf8_error().valid_up_to()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_text_and_reports_bad_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        std::fs::write(d.join("a.md"), "# A\nhello").expect("write");
        std::fs::create_dir(d.join("sub")).expect("mkdir");
        std::fs::write(d.join("sub/b.txt"), "world").expect("write");
        std::fs::write(d.join("bad.txt"), b"caf\xe9").expect("write");
        std::fs::write(d.join("bin.txt"), b"\x00\x01").expect("write");
        std::fs::write(d.join("image.png"), b"\x89PNG").expect("write");
        std::fs::write(d.join(".hidden.md"), "secret").expect("write");
        let (docs, skipped) = read_folder(d).expect("read");
        let names: Vec<_> = docs
            .iter()
            .map(|d| d.path.to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.md", "sub/b.txt"]);
        let reasons: Vec<_> = skipped
            .iter()
            .map(|s| (s.path.to_string_lossy().into_owned(), s.reason.clone()))
            .collect();
        assert_eq!(reasons[0].0, "bad.txt");
        assert!(reasons[0].1.contains("UTF-8"));
        assert_eq!(reasons[1], ("bin.txt".into(), "binary content".into()));
        assert_eq!(reasons.len(), 2);
    }
}
