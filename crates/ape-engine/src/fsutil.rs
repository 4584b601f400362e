//! Crash-safe, private file writes: a reader sees the old file or the new
//! one, never half of one, even if the process is killed or the disk fills
//! mid-write; and what ape-chat writes (document text, KV states that encode
//! it, chat history) is readable by its owner only.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Creates `dir` (and parents) if needed and makes it private to the user
/// (0700), so nothing below it is readable by others whatever its own mode.
pub fn private_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
}

/// Makes an existing file private to the user (0600); a missing file is
/// not an error.
pub fn private_file(path: &Path) -> io::Result<()> {
    match fs::set_permissions(path, fs::Permissions::from_mode(0o600)) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        r => r,
    }
}

/// Writes `parts` to `path` atomically: temp file (mode 0600) in the same
/// directory, fsync, rename over the target, fsync the directory. On any
/// error the temp file is removed and the old `path` (if any) is untouched.
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
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
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
    fn files_and_dirs_are_private_to_the_user() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("sub/x.bin");
        write_atomic(&p, &[b"secret"]).expect("write");
        let mode = |p: &Path| fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode(&p), 0o600);
        fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).expect("chmod");
        private_file(&p).expect("tighten");
        assert_eq!(mode(&p), 0o600);
        private_dir(&dir.path().join("sub")).expect("tighten");
        assert_eq!(mode(&dir.path().join("sub")), 0o700);
        private_file(&dir.path().join("missing")).expect("missing is fine");
    }

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
