//! Debounced folder watcher: bursts of file events (a `git checkout`
//! touching 500 files) become one batch, posted on a channel so a headless
//! loop or the TUI's event loop decides when to re-index. Watcher errors are
//! posted too, never fatal.

use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::RecursiveMode;
use notify_debouncer_full::{new_debouncer, DebounceEventResult, Debouncer, RecommendedCache};

/// What the watcher reports.
#[derive(Debug)]
pub enum WatchMsg {
    /// Files created, modified, removed or renamed (both names).
    Changed(Vec<PathBuf>),
    /// The OS watcher reported a problem; watching goes on.
    Error(String),
}

/// Watches a folder until dropped.
pub struct FolderWatcher {
    _debouncer: Debouncer<notify::RecommendedWatcher, RecommendedCache>,
}

impl FolderWatcher {
    /// Starts watching `dir` recursively; batches go to `sink` (on the
    /// watcher's thread) once the folder has been quiet for `debounce`.
    /// Paths under `ignore` (e.g. our own cache, if it lives inside the
    /// folder) never trigger a batch.
    pub fn start(
        dir: &Path,
        debounce: Duration,
        ignore: PathBuf,
        sink: impl Fn(WatchMsg) + Send + 'static,
    ) -> notify::Result<Self> {
        let mut debouncer = new_debouncer(debounce, None, move |res: DebounceEventResult| {
            let msg = match res {
                Ok(events) => {
                    let mut paths: Vec<PathBuf> = events
                        .into_iter()
                        .filter(|e| !e.kind.is_access())
                        .flat_map(|e| e.event.paths)
                        .filter(|p| !p.starts_with(&ignore))
                        .collect();
                    paths.sort();
                    paths.dedup();
                    if paths.is_empty() {
                        return;
                    }
                    WatchMsg::Changed(paths)
                }
                Err(errors) => WatchMsg::Error(
                    errors
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; "),
                ),
            };
            sink(msg);
        })?;
        debouncer.watch(dir, RecursiveMode::Recursive)?;
        Ok(Self {
            _debouncer: debouncer,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_writes_arrives_as_few_batches_naming_the_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (tx, rx) = std::sync::mpsc::channel();
        let ignored = dir.path().join("cache");
        std::fs::create_dir(&ignored).expect("mkdir");
        let _w = FolderWatcher::start(
            dir.path(),
            Duration::from_millis(300),
            ignored.clone(),
            move |m| {
                let _ = tx.send(m);
            },
        )
        .expect("watch");
        std::thread::sleep(Duration::from_millis(100));
        for i in 0..50 {
            std::fs::write(dir.path().join(format!("f{i}.md")), "x").expect("write");
        }
        std::fs::write(ignored.join("state.bin"), "x").expect("write");
        let mut seen = std::collections::BTreeSet::new();
        let mut batches = 0;
        while let Ok(WatchMsg::Changed(paths)) = rx.recv_timeout(Duration::from_secs(3)) {
            batches += 1;
            assert!(paths.iter().all(|p| !p.starts_with(&ignored)));
            seen.extend(paths);
        }
        assert_eq!(seen.len(), 50);
        assert!(batches <= 3, "{batches} batches for one burst");
    }
}
