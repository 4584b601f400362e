//! Debounced folder watcher: bursts of file events (a `git checkout`
//! touching 500 files) become one batch, posted on a channel so a headless
//! loop or the TUI's event loop decides when to re-index. Watcher errors are
//! posted too, never fatal.
//!
//! It watches the directories the index walks, each on its own (not the
//! tree recursively): `.git`, ignored trees such as `node_modules`, and
//! symlinks out of the folder cost no watch and raise no batch. Each batch
//! makes it look again (new directories watched, deleted ones dropped). When the system's watch limit
//! (`fs.inotify.max_user_watches`) is reached it says so and watches by
//! polling instead, so changes still arrive, later.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify::{Config, PollWatcher, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{new_debouncer_opt, DebounceEventResult, Debouncer, RecommendedCache};

use crate::ingest::{directories, Filters};

/// How often the polling fallback looks at the folder.
pub const POLL_EVERY: Duration = Duration::from_secs(30);

/// What the watcher reports.
#[derive(Debug)]
pub enum WatchMsg {
    /// Files created, modified, removed or renamed (both names).
    Changed(Vec<PathBuf>),
    /// The OS watcher reported a problem; watching goes on.
    Error(String),
}

/// How the folder is being watched.
enum Watching {
    /// One event watch per directory.
    Events {
        debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
        watched: HashSet<PathBuf>,
    },
    /// Scanned every [`POLL_EVERY`] (the watch limit was reached); held
    /// for as long as the watcher lives.
    Polling(#[allow(dead_code)] Debouncer<PollWatcher, RecommendedCache>),
}

/// Watches a folder until dropped.
pub struct FolderWatcher {
    _watching: Arc<Mutex<Option<Watching>>>,
}

/// What a batch asks the watcher itself to do.
enum Rescan {
    /// Paths changed: watch what the walk now enters (a new directory, or
    /// one deleted and made again, named here), drop what it left.
    Changed(Vec<PathBuf>),
    /// The watch limit was reached while adding one.
    Limit(String),
}

type Sink = Arc<dyn Fn(WatchMsg) + Send + Sync>;

impl FolderWatcher {
    /// Starts watching `dir` (the directories the walk enters under
    /// `filters`); batches go to `sink` (on the watcher's thread) once the
    /// folder has been quiet for `debounce`. Paths under `ignore` (e.g. our
    /// own cache, if it lives inside the folder) never trigger a batch.
    pub fn start(
        dir: &Path,
        filters: &Filters,
        debounce: Duration,
        ignore: PathBuf,
        sink: impl Fn(WatchMsg) + Send + Sync + 'static,
    ) -> notify::Result<Self> {
        Self::start_limited(dir, filters, debounce, ignore, sink, None, POLL_EVERY)
    }

    /// [`Self::start`], polling every `poll` once more than `limit`
    /// directories would be watched (how the system's limit is tested
    /// without lowering it).
    fn start_limited(
        dir: &Path,
        filters: &Filters,
        debounce: Duration,
        ignore: PathBuf,
        sink: impl Fn(WatchMsg) + Send + Sync + 'static,
        limit: Option<usize>,
        poll: Duration,
    ) -> notify::Result<Self> {
        let root = dir.canonicalize().map_err(notify::Error::io)?;
        let sink: Sink = Arc::new(sink);
        let (rescan_tx, rescan_rx) = mpsc::channel::<Rescan>();
        let handler = batches(
            root.clone(),
            ignore.clone(),
            Arc::clone(&sink),
            Some(rescan_tx),
        );
        let debouncer = new_debouncer_opt::<_, RecommendedWatcher, _>(
            debounce,
            None,
            handler,
            RecommendedCache::new(),
            Config::default().with_follow_symlinks(false),
        )?;
        let watching = Arc::new(Mutex::new(Some(Watching::Events {
            debouncer,
            watched: HashSet::new(),
        })));
        let ctx = Ctx {
            root,
            filters: filters.clone(),
            debounce,
            ignore,
            sink,
            limit,
            poll,
        };
        ctx.watch_new(&watching, &[])?;
        let (shared, ctx) = (Arc::clone(&watching), Arc::new(ctx));
        // Watches are added off the debouncer's own thread (it is the one
        // that delivers the batches asking for them).
        std::thread::Builder::new()
            .name("folder-watcher".into())
            .spawn(move || {
                for r in rescan_rx {
                    let done = match r {
                        Rescan::Changed(paths) => ctx.watch_new(&shared, &paths),
                        Rescan::Limit(why) => ctx.poll(&shared, &why),
                    };
                    if let Err(e) = done {
                        (ctx.sink)(WatchMsg::Error(e.to_string()));
                    }
                }
            })
            .map_err(notify::Error::io)?;
        Ok(Self {
            _watching: watching,
        })
    }
}

/// What adding watches needs.
struct Ctx {
    root: PathBuf,
    filters: Filters,
    debounce: Duration,
    ignore: PathBuf,
    sink: Sink,
    limit: Option<usize>,
    poll: Duration,
}

impl Ctx {
    /// Watches every directory the walk enters that is not watched yet,
    /// or is among `touched` (its watch may have gone with a deleted
    /// directory of that name), and forgets those the walk no longer
    /// enters; past the watch limit, polls instead.
    fn watch_new(
        &self,
        watching: &Mutex<Option<Watching>>,
        touched: &[PathBuf],
    ) -> notify::Result<()> {
        let dirs: HashSet<PathBuf> = directories(&self.root, &self.filters)
            .map_err(notify::Error::io)?
            .into_iter()
            .collect();
        let mut guard = watching
            .lock()
            .map_err(|_| notify::Error::generic("watcher lock"))?;
        let Some(Watching::Events { debouncer, watched }) = guard.as_mut() else {
            return Ok(());
        };
        let gone: Vec<PathBuf> = watched.difference(&dirs).cloned().collect();
        for d in gone {
            let _ = debouncer.unwatch(&d);
            watched.remove(&d);
        }
        for d in dirs {
            if watched.contains(&d) && !touched.contains(&d) {
                continue;
            }
            let over = !watched.contains(&d) && self.limit.is_some_and(|l| watched.len() >= l);
            let added = if over {
                Err(notify::Error::new(notify::ErrorKind::MaxFilesWatch))
            } else {
                debouncer.watch(&d, RecursiveMode::NonRecursive)
            };
            match added {
                Ok(()) => {
                    watched.insert(d);
                }
                Err(e) if matches!(e.kind, notify::ErrorKind::MaxFilesWatch) => {
                    let why = format!("{} directories watched", watched.len());
                    drop(guard);
                    return self.poll(watching, &why);
                }
                // Gone since the walk, or unreadable: the next one.
                Err(_) => {}
            }
        }
        Ok(())
    }

    /// Replaces the event watches by polling the whole folder.
    fn poll(&self, watching: &Mutex<Option<Watching>>, why: &str) -> notify::Result<()> {
        let mut guard = watching
            .lock()
            .map_err(|_| notify::Error::generic("watcher lock"))?;
        if matches!(guard.as_ref(), Some(Watching::Polling(_))) {
            return Ok(());
        }
        // The event watches go first: they hold the limit's watches.
        *guard = None;
        let handler = batches(
            self.root.clone(),
            self.ignore.clone(),
            Arc::clone(&self.sink),
            None,
        );
        let mut poller = new_debouncer_opt::<_, PollWatcher, _>(
            self.debounce,
            None,
            handler,
            RecommendedCache::new(),
            Config::default()
                .with_follow_symlinks(false)
                .with_poll_interval(self.poll),
        )?;
        poller.watch(&self.root, RecursiveMode::Recursive)?;
        *guard = Some(Watching::Polling(poller));
        (self.sink)(WatchMsg::Error(format!(
            "the system's file-watch limit was reached ({why}; fs.inotify.max_user_watches \
             is {}): watching by polling every {} s instead; raise the limit for changes at once",
            max_user_watches().map_or("unknown".into(), |n| n.to_string()),
            self.poll.as_secs_f64()
        )));
        Ok(())
    }
}

fn max_user_watches() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The debouncer's handler: batches of changed paths to `sink` (ours and
/// hidden ones left out), and for the event watcher, rescans when a
/// directory appears or the limit is reached.
fn batches(
    root: PathBuf,
    ignore: PathBuf,
    sink: Sink,
    rescan: Option<mpsc::Sender<Rescan>>,
) -> impl FnMut(DebounceEventResult) + Send + 'static {
    move |res: DebounceEventResult| match res {
        Ok(events) => {
            let mut paths: Vec<PathBuf> = events
                .into_iter()
                .filter(|e| !e.kind.is_access())
                .flat_map(|e| e.event.paths)
                .filter(|p| !p.starts_with(&ignore) && !hidden(&root, p))
                .collect();
            paths.sort();
            paths.dedup();
            if let Some(tx) = &rescan {
                // Cheap beside the text pass the batch causes (a walk too).
                if !paths.is_empty() {
                    let _ = tx.send(Rescan::Changed(paths.clone()));
                }
            }
            if !paths.is_empty() {
                sink(WatchMsg::Changed(paths));
            }
        }
        Err(errors) => {
            let limit = errors
                .iter()
                .any(|e| matches!(e.kind, notify::ErrorKind::MaxFilesWatch));
            if let (true, Some(tx)) = (limit, &rescan) {
                let _ = tx.send(Rescan::Limit("adding a watch".into()));
                return;
            }
            sink(WatchMsg::Error(
                errors
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
            ));
        }
    }
}

/// Whether `p` is a hidden entry of the folder or inside one (`.git`):
/// the walk never indexes them.
fn hidden(root: &Path, p: &Path) -> bool {
    p.strip_prefix(root).is_ok_and(|rel| {
        rel.components()
            .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What arrives until `wait` passes with nothing new, or `until` is seen.
    fn changes_until(
        rx: &mpsc::Receiver<WatchMsg>,
        wait: Duration,
        until: Option<&Path>,
    ) -> (Vec<PathBuf>, Vec<String>) {
        let (mut seen, mut notes) = (Vec::new(), Vec::new());
        while let Ok(m) = rx.recv_timeout(wait) {
            match m {
                WatchMsg::Changed(p) => seen.extend(p),
                WatchMsg::Error(e) => notes.push(e),
            }
            if until.is_some_and(|u| seen.iter().any(|p| p == u)) {
                break;
            }
        }
        (seen, notes)
    }

    fn changes(rx: &mpsc::Receiver<WatchMsg>, wait: Duration) -> (Vec<PathBuf>, Vec<String>) {
        changes_until(rx, wait, None)
    }

    #[test]
    fn a_burst_of_writes_arrives_as_few_batches_naming_the_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (tx, rx) = std::sync::mpsc::channel();
        let ignored = dir.path().join("cache");
        std::fs::create_dir(&ignored).expect("mkdir");
        let _w = FolderWatcher::start(
            dir.path(),
            &Filters::default(),
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

    /// `.git` and a symlink to a directory outside the folder raise no
    /// batch; a directory made after the start is watched too.
    #[test]
    fn only_what_the_index_reads_is_watched() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("root");
        std::fs::create_dir(root.join(".git")).expect("mkdir");
        std::os::unix::fs::symlink(outside.path(), root.join("elsewhere")).expect("symlink");
        let (tx, rx) = mpsc::channel();
        let _w = FolderWatcher::start(
            &root,
            &Filters::default(),
            Duration::from_millis(200),
            root.join("cache"),
            move |m| {
                let _ = tx.send(m);
            },
        )
        .expect("watch");
        std::thread::sleep(Duration::from_millis(100));
        std::fs::write(root.join(".git/index"), "x").expect("write");
        std::fs::write(outside.path().join("far.md"), "x").expect("write");
        let (seen, _) = changes(&rx, Duration::from_secs(2));
        assert!(seen.is_empty(), "{seen:?}");
        std::fs::create_dir(root.join("new")).expect("mkdir");
        std::thread::sleep(Duration::from_millis(800));
        std::fs::write(root.join("new/late.md"), "x").expect("write");
        let (seen, _) = changes(&rx, Duration::from_secs(2));
        assert!(seen.contains(&root.join("new/late.md")), "{seen:?}");
        // Deleted and made again: watched again.
        std::fs::remove_dir_all(root.join("new")).expect("rm");
        std::fs::create_dir(root.join("new")).expect("mkdir");
        std::thread::sleep(Duration::from_millis(800));
        std::fs::write(root.join("new/again.md"), "x").expect("write");
        let (seen, _) = changes(&rx, Duration::from_secs(2));
        assert!(seen.contains(&root.join("new/again.md")), "{seen:?}");
    }

    /// Past the watch limit: a note that says so, and changes still
    /// arrive, by polling.
    #[test]
    fn past_the_watch_limit_it_polls_and_says_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("root");
        for d in ["a", "b", "c"] {
            std::fs::create_dir(root.join(d)).expect("mkdir");
        }
        let (tx, rx) = mpsc::channel();
        let _w = FolderWatcher::start_limited(
            &root,
            &Filters::default(),
            Duration::from_millis(200),
            root.join("cache"),
            move |m| {
                let _ = tx.send(m);
            },
            Some(2),
            Duration::from_millis(300),
        )
        .expect("watch");
        let (_, notes) = changes(&rx, Duration::from_millis(500));
        assert!(notes.iter().any(|n| n.contains("polling")), "{notes:?}");
        // The poller's first scan is its baseline; a write after it is seen
        // at a next one.
        std::thread::sleep(Duration::from_millis(500));
        let file = root.join("c/x.md");
        std::fs::write(&file, "x").expect("write");
        let (seen, _) = changes_until(&rx, Duration::from_secs(10), Some(&file));
        assert!(seen.contains(&file), "{seen:?}");
    }
}
