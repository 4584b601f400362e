//! Crash-safe file writes: a reader sees the old file or the new one, never
//! half of one, even if the process is killed or the disk fills mid-write.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;

/// Writes `parts` to `path` atomically: temp file in the same directory,
/// fsync, rename over the target, fsync the directory. On any error the temp
/// file is removed and the old `path` (if any) is untouched.
pub fn write_atomic(path: &Path, parts: &[&[u8]]) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = File::create(&tmp)?;
        for part in parts {
            f.write_all(part)?;
        }
        f.sync_all()?;
        fs::rename(&tmp, path)?;
        // Make the rename itself durable; not all platforms allow this.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("x.bin");
        write_atomic(&p, &[b"old"]).expect("write");
        write_atomic(&p, &[b"ne", b"w"]).expect("write");
        assert_eq!(fs::read(&p).expect("read"), b"new");
        assert_eq!(fs::read_dir(dir.path()).expect("ls").count(), 1);
    }

    #[test]
    fn failure_keeps_the_old_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("sub");
        fs::create_dir(&p).expect("mkdir");
        // Renaming a file over a directory fails: the directory survives.
        assert!(write_atomic(&p, &[b"x"]).is_err());
        assert!(p.is_dir());
        assert_eq!(fs::read_dir(dir.path()).expect("ls").count(), 1);
    }
}
